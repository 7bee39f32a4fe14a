package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/authfile"
)

func runIt(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestNewPrintsATokenAndItsEntry(t *testing.T) {
	code, out, _ := runIt(t, "", "new", "--name", "orders", "--scopes", "genid, decode,segment:order", "--rate", "200000", "--burst", "20000")
	require.Equal(t, 0, code)
	lines := strings.SplitN(out, "\n", 2)
	token, ok := strings.CutPrefix(lines[0], "token: ")
	require.True(t, ok, out)
	require.NoError(t, access.CheckToken(token))

	// The entry is a valid auth file, and the token is its client's.
	p, err := authfile.Parse("printed", []byte("clients:\n"+lines[1]))
	require.NoError(t, err, out)
	c := p.Clients()[0]
	assert.Equal(t, "orders", c.Name)
	assert.Equal(t, []access.Scope{"genid", "decode", "segment:order"}, c.Scopes)
	assert.Equal(t, 200000.0, c.Rate)
	assert.Equal(t, int64(20000), c.Burst)
	assert.Equal(t, access.HashToken(token), c.Tokens[0])
	assert.NotContains(t, lines[1], token, "the entry never holds the token")

	// Hashing it again gives the same line.
	code, hashed, _ := runIt(t, token+"\n", "hash")
	require.Equal(t, 0, code)
	assert.Equal(t, "tokenSHA256: \""+access.HashTokenHex(token)+"\"\n", hashed)
}

func TestNewWithoutName(t *testing.T) {
	code, out, _ := runIt(t, "", "new")
	require.Equal(t, 0, code)
	assert.Regexp(t, `^token: vesta_\S{43}\ntokenSHA256: "[0-9a-f]{64}"\n$`, out)
}

func TestNewIntoAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orders.token")
	code, out, stderr := runIt(t, "", "new", "--name", "orders", "--scopes", "genid", "--out", path)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	token := strings.TrimSpace(string(data))
	require.NoError(t, access.CheckToken(token))
	assert.NotContains(t, out, token, "with --out the token is only in the file")
	assert.Contains(t, out, access.HashTokenHex(token))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	code, _, stderr = runIt(t, "", "new", "--out", path)
	assert.Equal(t, 2, code, "an existing file is not overwritten")
	assert.Contains(t, stderr, "file exists")
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", nil, "usage"},
		{"", []string{"mint"}, `unknown command "mint"`},
		{"", []string{"new", "--scopes", "admin"}, `--scopes: scope "admin"`},
		{"", []string{"new", "--name", "a b"}, "--name"},
		{"", []string{"new", "--burst", "5"}, "--burst"},
		{"", []string{"new", "--rate", "-1"}, "--rate"},
		{"", []string{"hash", "vesta_secret"}, "never from arguments"},
		{"vesta_se cret\n", []string{"hash"}, "stdin: unauthenticated: token holds a character"},
		{"", []string{"hash"}, "stdin: unauthenticated: no token"},
	} {
		code, _, stderr := runIt(t, c.stdin, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.NotContains(t, stderr, "secret", "a token is never echoed")
	}
}

// --help names the command and its subcommand, and lists the flags new
// takes, on stdout.
func TestHelp(t *testing.T) {
	code, stdout, stderr := runIt(t, "", "new", "--help")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	assert.True(t, strings.HasPrefix(stdout, "vesta-token new: makes a client token"), stdout)
	assert.Contains(t, stdout, "Usage:\n  vesta-token new [--name NAME]")
	for _, f := range []string{"--name string", "--scopes string", "--rate float", "--burst int", "--out string"} {
		assert.Contains(t, stdout, f)
	}
	assert.NotContains(t, stdout, "Usage of")

	code, stdout, _ = runIt(t, "", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "vesta-token new [--name NAME]")
	assert.Contains(t, stdout, "vesta-token hash")
}
