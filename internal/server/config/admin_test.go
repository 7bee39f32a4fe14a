package config

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestAdminListen(t *testing.T) {
	c, err := load(t, "--data-dir", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "", c.AdminListen, "off by default")

	c, err = load(t, "--data-dir", t.TempDir(), "--admin-listen", "127.0.0.1:9090")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9090", c.AdminListen)
	t.Setenv("VESTA_ADMIN_LISTEN", ":9091")
	c, err = load(t, "--data-dir", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, ":9091", c.AdminListen)
}

func TestAdminListenRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--admin-listen", "9090"},
		{"--admin-listen", "localhost:http"},
		{"--admin-listen", "127.0.0.1:70000"},
		{"--admin-listen="},
		{"--admin-listen", ":8080"},                                        // listen's default
		{"--listen", "127.0.0.1:9000", "--admin-listen", "0.0.0.0:9000"},   // overlapping
		{"--listen", "127.0.0.1:9000", "--admin-listen", "127.0.0.1:9000"}, // the same
	} {
		_, err := load(t, append(args, "--data-dir", t.TempDir())...)
		require.Error(t, err, "%v", args)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "config key adminListen:", "%v", args)
	}
	_, err := load(t, "--data-dir", t.TempDir(), "--listen", "127.0.0.1:9000", "--admin-listen", "127.0.0.2:9000")
	assert.NoError(t, err, "another host, the same port")
}

// server-rest serves /metrics on its own port: it has no --admin-listen.
func TestRESTGroupsHaveNoAdminListen(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	Register(fs, restDefaults, RESTGroups()...)
	assert.Nil(t, fs.Lookup("admin-listen"))
	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	Register(fs, restDefaults)
	assert.NotNil(t, fs.Lookup("admin-listen"), "server-rpc's groups (every one) have it")
}
