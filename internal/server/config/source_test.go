package config

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// Every refused value names the layer that set it: the flag, the
// variable, the file and line (the native key's or Vesta's), or the
// default; errors.Is and errors.As see through it.
func TestErrorsNameTheirSource(t *testing.T) {
	const want = "want an integer 0..1023"
	check := func(t *testing.T, err error, msg string, src Source) {
		t.Helper()
		require.ErrorIs(t, err, intf.ErrInvalidArgument)
		var ve *ValueError
		require.True(t, errors.As(err, &ve), "a *ValueError: %v", err)
		assert.Equal(t, src, ve.Source)
		assert.Equal(t, "invalid argument: "+msg, err.Error())
	}
	t.Run("flag", func(t *testing.T) {
		_, err := load(t, "--machine", "2000")
		check(t, err, `config key machine: "2000" from flag --machine: `+want, Source{Layer: LayerFlag, Name: "--machine"})
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("VESTA_MACHINE", "2000")
		_, err := load(t)
		check(t, err, `config key machine: "2000" from environment variable VESTA_MACHINE: `+want, Source{Layer: LayerEnv, Name: "VESTA_MACHINE"})
	})
	files := []struct{ name, body, key string }{
		{"c.yaml", "# a comment\nlisten: :8080\nmachine: 2000\n", "machine"},
		{"c.yml", "vesta:\n  genMethod: 1\n  machine: 2000\n", "vesta.machine"},
		{"c.json", "{\n  \"listen\": \":8080\",\n  \"machine\": 2000\n}\n", "machine"},
		{"c.toml", "# TOML\nlisten = \":8080\"\nmachine = 2000\n", "machine"},
		{"t.toml", "[vesta]\ngenMethod = 1\nmachine = 2000\n", "vesta.machine"},
		{"i.toml", "# TOML\nlisten = \":8080\"\nvesta = {genMethod = 1, machine = 2000}\n", "vesta.machine"},
		{"c.properties", "# Vesta's file\nvesta.genMethod=1\nvesta.machine=2000\n", "vesta.machine"},
		{"d.properties", "vesta.ips=10.0.0.1,\\\n  10.0.0.2\nvesta.machine=2000\n", "vesta.machine"},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			file := writeFile(t, f.name, f.body)
			_, err := load(t, "--config", file)
			check(t, err, "config key "+f.key+`: "2000" from file `+file+" line 3: "+want, Source{Layer: LayerFile, Name: file, Line: 3})
		})
	}
	t.Run("file named by VESTA_CONFIG", func(t *testing.T) {
		file := writeFile(t, "c.yaml", "epoch: soon\n")
		t.Setenv("VESTA_CONFIG", file)
		_, err := load(t)
		check(t, err, `config key epoch: "soon" from file `+file+" line 1: want an integer: Unix milliseconds, 1..now",
			Source{Layer: LayerFile, Name: file, Line: 1})
	})
	t.Run("not set", func(t *testing.T) {
		_, err := load(t, "--machine-provider", "ips")
		check(t, err, "config key ips: not set: want a comma-separated list of IPv4 addresses (required by machineProvider ips)", Source{})
	})
	t.Run("empty variable", func(t *testing.T) {
		t.Setenv("VESTA_LISTEN", "")
		_, err := load(t)
		check(t, err, `config key listen: "" from environment variable VESTA_LISTEN: want host:port with port 0..65535, e.g. :8080 or 127.0.0.1:8080 (the variable is set but empty)`,
			Source{Layer: LayerEnv, Name: "VESTA_LISTEN"})
	})
	t.Run("flag beats environment", func(t *testing.T) {
		t.Setenv("VESTA_MAX_BATCH", "5")
		_, err := load(t, "--max-batch", "0")
		check(t, err, `config key maxBatch: "0" from flag --max-batch: want an integer 1..100000`, Source{Layer: LayerFlag, Name: "--max-batch"})
	})
}

func TestSourceString(t *testing.T) {
	for want, src := range map[string]Source{
		"flag --machine":                      {Layer: LayerFlag, Name: "--machine"},
		"environment variable VESTA_MACHINE":  {Layer: LayerEnv, Name: "VESTA_MACHINE"},
		"file /etc/vesta.yaml line 3":         {Layer: LayerFile, Name: "/etc/vesta.yaml", Line: 3},
		"file /etc/vesta.yaml":                {Layer: LayerFile, Name: "/etc/vesta.yaml"},
		"default":                             {},
		"environment variable VESTA_DATA_DIR": {Layer: LayerEnv, Name: "VESTA_DATA_DIR"},
	} {
		assert.Equal(t, want, src.String())
	}
	e := &ValueError{Key: "segmentStore", Value: "sqlite", Want: "off"}
	assert.Equal(t, `invalid argument: config key segmentStore: "sqlite" (the default): want off`, e.Error())
}

// A secret's value appears in no error, whichever layer set it (the etcd
// password: internal/server/app's TestSecretsAreNotShown).
func TestSecretsAreNotShown(t *testing.T) {
	// A postgres URL given while the store is sqlite.
	t.Setenv("VESTA_SEGMENT_DSN", "postgres://ids:hunter2@db/ids?sslmode=require")
	_, err := load(t, "--data-dir", t.TempDir())
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `config key segmentDSN: "(not shown: it may hold a password)" from environment variable VESTA_SEGMENT_DSN: want a file path`)
	assert.NotContains(t, err.Error(), "hunter2")
}

func TestKeyLines(t *testing.T) {
	for _, f := range []struct {
		name, body string
		typeLine   int
	}{
		{"a.yaml", "machine: 1\nvesta:\n  type: 0\n", 3},
		{"a.json", "{\"machine\": 1,\n \"vesta\": {\"type\": 0}}", 2},
		{"a.toml", "machine = 1\n[vesta]\ntype = 0\n", 3},
		{"b.toml", "machine = 1\n\"vesta\".\"type\" = 0\n", 2},
		{"a.properties", "machine=1\n\nvesta.type=0\n", 3},
	} {
		lines := keyLines(writeFile(t, f.name, f.body))
		assert.Equal(t, 1, lines["machine"], f.name)
		assert.Equal(t, f.typeLine, lines["vesta.type"], f.name)
	}
	assert.Nil(t, keyLines(filepath.Join(t.TempDir(), "missing.yaml")))
	assert.Empty(t, keyLines(writeFile(t, "bad.toml", "machine = \n")), "a file that does not parse has no lines")
}
