package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
)

// The go-plugin cookie is a VESTA_* variable the loader knows, so that
// server-rpc started as a plugin is not refused for it.
func TestPluginCookieIsAKnownVariable(t *testing.T) {
	assert.Contains(t, config.OtherEnv(), pluginwire.Handshake.MagicCookieKey)
}

// --help shows server-rpc's defaults (listen :20880, genMethod 1) and its
// own flags with their types, on stdout.
func TestHelp(t *testing.T) {
	var f flags
	var out, errOut bytes.Buffer
	p := program(&f, false)
	p.Stdout, p.Stderr = &out, &errOut
	_, _, err := p.Setup([]string{"--help"})
	require.ErrorIs(t, err, app.ErrExit)
	assert.Empty(t, errOut.String())
	text := out.String()
	assert.True(t, strings.HasPrefix(text, "server-rpc: the vesta-go central server"), text)
	flat := strings.Join(strings.Fields(text), " ")
	for _, s := range []string{
		"--listen string listen address host:port (default :20880)",
		"--gen-method int genMethod field 0..3 (0 embedded, 1 RPC, 2 REST) (default 1)",
		"--max-conns int the most TCP connections the port holds at once",
		"--first-byte-timeout duration how long a new connection may send nothing (default 10s)",
		"--plugin serve as a hashicorp/go-plugin plugin",
		"--version print the version and exit",
		"docs/rpc.md",
	} {
		assert.Contains(t, flat, s)
	}
}

// A word after a bare boolean key flag is its value, not an argument.
func TestBoolFlagWithAWord(t *testing.T) {
	var f flags
	setup := func(args ...string) error {
		p := program(&f, false)
		p.Stdout, p.Stderr = io.Discard, io.Discard
		_, _, err := p.Setup(append([]string{"--data-dir", t.TempDir()}, args...))
		return err
	}
	apart, joined := setup("--no-data-dir", "maybe"), setup("--no-data-dir=maybe")
	require.Error(t, apart)
	assert.Equal(t, joined.Error(), apart.Error())
	assert.Contains(t, apart.Error(), `config key noDataDir: "maybe" from flag --no-data-dir`)
	err := setup("--bogus")
	require.Error(t, err)
	assert.Equal(t, "unknown flag: --bogus (see --help)", err.Error())
}

// Vesta's central server's own vesta-server.properties runs server-rpc as
// it is: its port is vesta.service.port, its registry a warning.
func TestVestaServerProperties(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vesta-server.properties")
	require.NoError(t, os.WriteFile(file, []byte("vesta.service.register.center=multicast://224.5.6.7:1234\n"+
		"vesta.service.port=20881\nvesta.machine=1023\nvesta.genMethod=1\nvesta.type=0\n"), 0o600))
	var f flags
	var errOut bytes.Buffer
	p := program(&f, false)
	p.Stdout, p.Stderr = io.Discard, &errOut
	cfg, _, err := p.Setup([]string{"--config", file, "--data-dir", t.TempDir()})
	require.NoError(t, err)
	assert.Equal(t, ":20881", cfg.Listen)
	assert.Equal(t, int64(1023), cfg.Service.Machine)
	assert.Contains(t, errOut.String(), "vesta.service.register.center has no effect")
}
