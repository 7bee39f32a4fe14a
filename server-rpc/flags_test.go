package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
)

// ownFlags are the flags of server-rpc's own settings, with their
// defaults: the rpc group's keys, shutdownTimeout (once a flag of
// server-rpc alone) and --plugin.
func ownFlags() *pflag.FlagSet {
	var f flags
	all := pflag.NewFlagSet("server-rpc", pflag.ContinueOnError)
	config.Register(all, config.Defaults{}, config.GroupServer, config.GroupRPC)
	f.register(all)
	fs := pflag.NewFlagSet("server-rpc", pflag.ContinueOnError)
	for _, k := range config.Keys() {
		if k.Group == config.GroupRPC || k.Name == config.KeyShutdownTimeout {
			fs.AddFlag(all.Lookup(k.Flag))
		}
	}
	fs.AddFlag(all.Lookup("plugin"))
	return fs
}

// sameDefault reports whether text, parsed as flag f's value, is f's
// default: "5m" and "5m0s" are the same duration.
func sameDefault(t *testing.T, f *pflag.Flag, text string) bool {
	t.Helper()
	fs := ownFlags()
	fresh := fs.Lookup(f.Name)
	require.NoError(t, fresh.Value.Set(text), "--%s: %q is no value of the flag", f.Name, text)
	return fresh.Value.String() == f.DefValue
}

// docs/rpc.md's table of server-rpc's own flags lists every one of them,
// and only them, with its default.
func TestDocsFlagsTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/rpc.md")
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `--([a-z-]+)` \\| `([^`]*)` \\|")
	fs := ownFlags()
	seen := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := fs.Lookup(m[1])
		if !assert.NotNil(t, f, "docs/rpc.md lists --%s, which server-rpc does not have", m[1]) {
			continue
		}
		seen[f.Name] = true
		assert.True(t, sameDefault(t, f, m[2]), "docs/rpc.md: --%s default %s, the flag's is %s", f.Name, m[2], f.DefValue)
	}
	fs.VisitAll(func(f *pflag.Flag) { assert.True(t, seen[f.Name], "docs/rpc.md lists --%s", f.Name) })
}

// The package comment's flag list agrees with the flags too.
func TestDocCommentFlags(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^//\t--([a-z-]+) (.*)$`)
	def := regexp.MustCompile(`\(default ([^)]+)\)`)
	fs := ownFlags()
	seen := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(src), -1) {
		f := fs.Lookup(m[1])
		if !assert.NotNil(t, f, "doc.go lists --%s, which server-rpc does not have", m[1]) {
			continue
		}
		seen[f.Name] = true
		if d := def.FindStringSubmatch(m[2]); d != nil {
			assert.True(t, sameDefault(t, f, d[1]), "doc.go: --%s default %s, the flag's is %s", f.Name, d[1], f.DefValue)
		} else {
			assert.Equal(t, "plugin", f.Name, "doc.go gives the default of --%s", f.Name)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) { assert.True(t, seen[f.Name], "doc.go lists --%s", f.Name) })
}
