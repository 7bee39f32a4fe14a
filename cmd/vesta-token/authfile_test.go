package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/authfile"
)

// --auth-file makes a whole auth file the server loads, then appends the
// next clients to it; each token is its client's.
func TestNewWritesTheAuthFile(t *testing.T) {
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.yaml")
	code, out, stderr := runIt(t, "", "new", "--name", "orders", "--scopes", "genid", "--rate", "100", "--auth-file", auth)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "client orders written to a new auth file "+auth)
	first, ok := strings.CutPrefix(strings.TrimSpace(out), "token: ")
	require.True(t, ok, "the token is printed, the entry is in the file: %q", out)
	fi, err := os.Stat(auth)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	tokenFile := filepath.Join(dir, "ops.token")
	code, out, stderr = runIt(t, "", "new", "--name", "ops", "--scopes", "metrics", "--out", tokenFile, "--auth-file", auth)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, out, "the token is in its file, the entry in the auth file")
	assert.Contains(t, stderr, "client ops added to auth file "+auth)
	second, err := os.ReadFile(tokenFile)
	require.NoError(t, err)

	p, err := authfile.Load(auth)
	require.NoError(t, err)
	cs := p.Clients()
	require.Len(t, cs, 2)
	assert.Equal(t, "orders", cs[0].Name)
	assert.Equal(t, []access.Scope{"genid"}, cs[0].Scopes)
	assert.Equal(t, 100.0, cs[0].Rate)
	assert.Equal(t, access.HashToken(first), cs[0].Tokens[0])
	assert.Equal(t, "ops", cs[1].Name)
	assert.Equal(t, access.HashToken(strings.TrimSpace(string(second))), cs[1].Tokens[0])
	data, err := os.ReadFile(auth)
	require.NoError(t, err)
	assert.NotContains(t, string(data), first, "the file holds digests, never a token")
}

// A file written by hand, without a final newline, takes the entry on a
// line of its own.
func TestNewAppendsAfterAFileWithoutFinalNewline(t *testing.T) {
	auth := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte("clients:\n  - name: a\n    tokenSHA256: \""+strings.Repeat("ab", 32)+"\"\n    scopes: [genid]"), 0o640))
	code, _, stderr := runIt(t, "", "new", "--name", "b", "--scopes", "decode", "--auth-file", auth)
	require.Equal(t, 0, code, stderr)
	p, err := authfile.Load(auth)
	require.NoError(t, err)
	require.Len(t, p.Clients(), 2)
	fi, err := os.Stat(auth)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "an existing file keeps its mode")
}

// What the entry cannot join is refused before anything is written: no
// token file, the auth file as it was.
func TestNewAuthFileRefusals(t *testing.T) {
	for _, c := range []struct {
		name, file string
		args       []string
		want       string
	}{
		{"a name already there", "clients:\n  - name: orders\n    tokenSHA256: \"" + strings.Repeat("ab", 32) + "\"\n",
			[]string{"--name", "orders"}, `"orders" is also the name of client 1`},
		{"a flow list", "clients: []\n", []string{"--name", "orders"}, "--auth-file"},
		{"a broken file", "clients:\n  - name: [\n", []string{"--name", "orders"}, "fix it, then add the client again"},
		{"no name", "", nil, "--auth-file: give the client's --name too"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			auth, tokenFile := filepath.Join(dir, "auth.yaml"), filepath.Join(dir, "t.token")
			if c.file != "" {
				require.NoError(t, os.WriteFile(auth, []byte(c.file), 0o600))
			}
			args := append([]string{"new", "--out", tokenFile, "--auth-file", auth}, c.args...)
			code, _, stderr := runIt(t, "", args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, c.want)
			assert.NoFileExists(t, tokenFile)
			if c.file == "" {
				assert.NoFileExists(t, auth)
				return
			}
			data, err := os.ReadFile(auth)
			require.NoError(t, err)
			assert.Equal(t, c.file, string(data))
		})
	}
}
