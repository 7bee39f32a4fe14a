package config

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/serverdefaults"
)

// The rpc group is server-rpc's alone: server-rest's --help does not list
// it; shutdownTimeout (group server) both servers read.
func TestRPCGroupIsServerRPCs(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	Register(fs, restDefaults, RESTGroups()...)
	for _, k := range rpcKeys() {
		assert.Nil(t, fs.Lookup(k.Flag), k.Flag)
	}
	assert.NotNil(t, fs.Lookup("shutdown-timeout"))
	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	Register(fs, restDefaults)
	assert.NotNil(t, fs.Lookup("max-conns"), "server-rpc's groups (every one) have it")
}

// Unset, the keys are the servers' defaults; set, from a flag or a
// variable, they are read.
func TestRPCKeys(t *testing.T) {
	c, err := load(t, "--data-dir", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, RPC{MaxCallsPerConn: serverdefaults.MaxCallsPerConn, MaxMessageBytes: serverdefaults.MaxMessageBytes,
		FirstByteTimeout: serverdefaults.FirstByteTimeout, IdleTimeout: serverdefaults.IdleTimeout,
		MessageTimeout: serverdefaults.MessageTimeout, WriteTimeout: serverdefaults.WriteTimeout}, c.RPC)
	assert.Equal(t, 15*time.Second, c.ShutdownTimeout)

	t.Setenv("VESTA_IDLE_TIMEOUT", "90s")
	c, err = load(t, "--data-dir", t.TempDir(), "--max-conns", "7", "--max-calls-per-conn", "3", "--max-message-bytes", "2048",
		"--first-byte-timeout", "1s", "--message-timeout", "2s", "--write-timeout", "3s", "--shutdown-timeout", "250ms")
	require.NoError(t, err)
	assert.Equal(t, RPC{MaxCallsPerConn: 3, MaxMessageBytes: 2048, FirstByteTimeout: time.Second, IdleTimeout: 90 * time.Second,
		MessageTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second}, c.RPC)
	assert.Equal(t, 250*time.Millisecond, c.ShutdownTimeout)
	assert.Equal(t, 7, c.MaxConns)

	for _, args := range [][]string{{"--max-conns", "-1"}, {"--max-message-bytes", "1023"}, {"--idle-timeout", "0s"},
		{"--write-timeout", "25h"}, {"--shutdown-timeout", "0s"}} {
		_, err := load(t, append([]string{"--data-dir", t.TempDir()}, args...)...)
		assert.ErrorContains(t, err, "from flag "+args[0]+":", args)
	}
}
