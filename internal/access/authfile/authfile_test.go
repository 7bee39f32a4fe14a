package authfile_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/authfile"
	"github.com/vesta-go/vesta/intf"
)

var (
	tokOrders = "vesta_orders-token"
	tokOps    = "vesta_ops-token"
	tokNew    = "vesta_orders-token-2"
)

func good() string {
	return `# the clients of this server
clients:
  - name: orders
    tokenSHA256: "` + access.HashTokenHex(tokOrders) + `"
    scopes: [genid, decode, "segment:order"]
    rate: 200000
    burst: 20000
  - name: ops
    tokenSHA256:
      - ` + access.HashTokenHex(tokOps) + `
      - ` + strings.ToUpper(access.HashTokenHex(tokNew)) + `
    scopes: [metrics, "segment:*"]
`
}

func TestParse(t *testing.T) {
	p, err := authfile.Parse("auth.yaml", []byte(good()))
	require.NoError(t, err)
	assert.Equal(t, []access.Client{
		{Name: "orders", Tokens: [][32]byte{access.HashToken(tokOrders)},
			Scopes: []access.Scope{"genid", "decode", "segment:order"}, Rate: 200000, Burst: 20000},
		{Name: "ops", Tokens: [][32]byte{access.HashToken(tokOps), access.HashToken(tokNew)},
			Scopes: []access.Scope{"metrics", "segment:*"}},
	}, p.Clients())

	p, err = authfile.Parse("auth.yaml", []byte("clients: []\n"))
	require.NoError(t, err)
	assert.Empty(t, p.Clients(), "no clients: every call is refused")
}

func TestParseErrorsNameTheLine(t *testing.T) {
	hash := access.HashTokenHex(tokOrders)
	for _, c := range []struct {
		file string
		line int
		want string
	}{
		{"", 0, "empty"},
		{"clients:\n  - name: [a\n", 1, "not YAML"}, // where yaml.v3 places it
		{"clients:\n  - name: a\n\ttokenSHA256: x\n", 2, "not YAML"},
		{"- a\n", 1, "mapping with the key clients"},
		{"client:\n  - name: a\n", 1, `unknown key "client"`},
		{"clients: 3\n", 1, "want a list of clients"},
		{"clients:\n  - x\n", 2, "client 1: want a mapping"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    token: abc\n", 4, `client 1 (a): unknown key "token"`},
		{"clients:\n  - name: a\n    tokenSHA256: my-secret-token\n", 3, "not a hex SHA-256"},
		{"clients:\n  - name: a\n    tokenSHA256: {x: 1}\n", 3, "tokenSHA256: want the hex SHA-256"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    scopes: genid\n", 4, "want a list of scopes"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    scopes: [genid, admin]\n", 4, `scope "admin"`},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    rate: fast\n", 4, "rate: want a number"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    rate: -5\n", 4, "rate: -5"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    rate: 5\n    burst: 1.5\n", 5, "burst: want a whole number"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n    burst: 5\n", 4, "burst: 5 without a rate"},
		{"clients:\n  - name: a\n    name: b\n", 3, "name given twice"},
		{"clients:\n  - name: a b\n    tokenSHA256: " + hash + "\n", 2, "name: \"a b\""},
		{"clients:\n  - name: a\n", 2, "tokenSHA256: missing"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n  - name: a\n    tokenSHA256: " + access.HashTokenHex("x") + "\n", 4,
			"client 2 (a): name: \"a\" is also the name of client 1"},
		{"clients:\n  - name: a\n    tokenSHA256: " + hash + "\n  - name: b\n    tokenSHA256: " + hash + "\n", 5,
			"a token belongs to one client"},
	} {
		_, err := authfile.Parse("auth.yaml", []byte(c.file))
		var fe *authfile.Error
		require.ErrorAs(t, err, &fe, c.file)
		assert.Equal(t, c.line, fe.Line, "%s\n%v", c.file, err)
		assert.Contains(t, err.Error(), c.want, c.file)
		assert.Contains(t, err.Error(), "auth file auth.yaml")
		assert.NotContains(t, err.Error(), "my-secret-token", "a value in tokenSHA256 may be a token: never quoted")
	}
}

func TestLoad(t *testing.T) {
	_, err := authfile.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "missing.yaml: no such file or directory")
}

func TestWatcher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte(good()), 0o600))
	g, err := access.NewGuard(access.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	w, err := authfile.NewWatcher(path, g)
	require.NoError(t, err)
	assert.Equal(t, "auth file "+path, w.Name())
	c, err := g.Authenticate(tokOrders, "")
	require.NoError(t, err)
	assert.Equal(t, "orders", c.Name())

	changed, err := w.Reload(false)
	require.NoError(t, err)
	assert.False(t, changed, "same content: nothing to do")

	// A broken file: the old policy stays in force.
	require.NoError(t, os.WriteFile(path, []byte("clients:\n  - name: [\n"), 0o600))
	_, err = w.Reload(false)
	assert.ErrorContains(t, err, "line 2")
	_, err = g.Authenticate(tokOrders, "")
	require.NoError(t, err)
	changed, err = w.Reload(false)
	require.NoError(t, err, "the broken content was reported once")
	assert.False(t, changed)

	// Fixed, without orders: its token stops working at once.
	require.NoError(t, os.WriteFile(path, []byte("clients:\n  - name: ops\n    tokenSHA256: "+access.HashTokenHex(tokOps)+"\n"), 0o600))
	changed, err = w.Reload(false)
	require.NoError(t, err)
	assert.True(t, changed)
	_, err = g.Authenticate(tokOrders, "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)
	st := g.Stats()
	assert.Equal(t, uint64(2), st.PolicyLoads)
	assert.Equal(t, uint64(1), st.PolicyLoadErrors)

	require.NoError(t, os.Remove(path))
	_, err = w.Reload(true)
	assert.ErrorContains(t, err, "no such file")
	_, err = g.Authenticate(tokOps, "")
	require.NoError(t, err, "a vanished file leaves the policy in force")

	_, err = authfile.NewWatcher(path, g)
	assert.Error(t, err)
}
