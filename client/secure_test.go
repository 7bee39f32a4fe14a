package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/rpc"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/tlstest"
	"github.com/vesta-go/vesta/intf"
)

func certs(t *testing.T, ca *tlstest.CA, clientCA *tlstest.CA) *tlsserve.Certs {
	t.Helper()
	f := tlstest.Write(t, t.TempDir(), ca.Server(t), clientCA)
	c, err := tlsserve.Load(tlsserve.Files(f))
	require.NoError(t, err)
	return c
}

func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "server CA")
	srv := rpctest.Start(t, rpctest.Config{Machine: 4, Options: rpcserver.Options{TLS: certs(t, ca, nil)}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c := newClient(t, []string{srv.Addr}, WithTLS(tlstest.ClientConfig(ca, nil)))
	ids, err := c.GenIds(ctx, 100)
	require.NoError(t, err)
	assert.Len(t, ids, 100)
	assert.Equal(t, uint64(1), srv.RPC.Stats().TLS.Handshakes)

	// A client that does not trust the server's CA, and one that speaks
	// plain TCP: neither gets an ID, and the error says why.
	_, err = newClient(t, []string{srv.Addr}, WithTLS(tlstest.ClientConfig(tlstest.NewCA(t, "other"), nil))).GenId(ctx)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.ErrorContains(t, err, "certificate signed by unknown authority")
	_, err = newClient(t, []string{srv.Addr}, WithCallTimeout(time.Second)).GenId(ctx)
	require.Error(t, err)
	require.Eventually(t, func() bool { return srv.RPC.Stats().TLS.Failures[tlsserve.ReasonNotTLS] >= 1 },
		10*time.Second, time.Millisecond)
}

func TestMutualTLS(t *testing.T) {
	ca, clientCA := tlstest.NewCA(t, "server CA"), tlstest.NewCA(t, "client CA")
	srv := rpctest.Start(t, rpctest.Config{Options: rpcserver.Options{TLS: certs(t, ca, clientCA)}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	me := clientCA.Client(t, "orders")
	_, err := newClient(t, []string{srv.Addr}, WithTLS(tlstest.ClientConfig(ca, &me))).GenId(ctx)
	require.NoError(t, err)

	_, err = newClient(t, []string{srv.Addr}, WithTLS(tlstest.ClientConfig(ca, nil)), WithCallTimeout(time.Second)).GenId(ctx)
	require.Error(t, err, "no client certificate")
	stranger := tlstest.NewCA(t, "other").Client(t, "stranger")
	_, err = newClient(t, []string{srv.Addr}, WithTLS(tlstest.ClientConfig(ca, &stranger)), WithCallTimeout(time.Second)).GenId(ctx)
	require.Error(t, err, "a certificate of another CA")
	require.Eventually(t, func() bool {
		f := srv.RPC.Stats().TLS.Failures
		return f[tlsserve.ReasonNoClientCert] >= 1 && f[tlsserve.ReasonBadClientCert] >= 1
	}, 10*time.Second, time.Millisecond)
}

func guard(t *testing.T, clients ...access.Client) *access.Guard {
	t.Helper()
	p, err := access.NewPolicy(clients)
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Logger: quiet})
	require.NoError(t, err)
	return g
}

func TestTokens(t *testing.T) {
	const (
		tokOrders = "vesta_orders"
		tokOps    = "vesta_ops"
	)
	g := guard(t,
		access.Client{Name: "orders", Tokens: [][32]byte{access.HashToken(tokOrders)}, Scopes: []access.Scope{"genid", "segment:order"}},
		access.Client{Name: "ops", Tokens: [][32]byte{access.HashToken(tokOps)}, Scopes: []access.Scope{"decode"}})
	first := rpctest.Start(t, rpctest.Config{Machine: 1, Guard: g})
	second := rpctest.Start(t, rpctest.Config{Machine: 2, Guard: g})
	addrs := []string{first.Addr, second.Addr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	orders := newClient(t, addrs, WithToken(tokOrders))
	id, err := orders.GenId(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), intf.Id(id).Fields().Machine)
	_, err = orders.ExpId(ctx, id)
	var se *intf.ScopeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, intf.ScopeError{Client: "orders", Scope: "decode"}, *se)
	assert.ErrorIs(t, err, intf.ErrPermissionDenied)

	ops := newClient(t, addrs, WithToken(tokOps))
	fields, err := ops.ExpId(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(1), fields.Machine)
	_, err = ops.GenIds(ctx, 5)
	assert.ErrorIs(t, err, intf.ErrPermissionDenied)

	for _, c := range []*Client{newClient(t, addrs), newClient(t, addrs, WithToken("vesta_unknown"))} {
		_, err = c.GenId(ctx)
		assert.ErrorIs(t, err, intf.ErrUnauthenticated)
		assert.NotErrorIs(t, err, intf.ErrUnavailable, "a refusal is an answer: no fail-over")
	}
	assert.Zero(t, second.RPC.Stats().Accepted, "no call went on to the second server")
	st := g.Stats()
	assert.Equal(t, uint64(1), st.Refusals[access.ReasonNoToken])
	assert.Equal(t, uint64(1), st.Refusals[access.ReasonUnknownToken])
	assert.Equal(t, uint64(2), st.Refusals[access.ReasonScope])
	assert.Equal(t, uint64(1), st.Clients[0].Ids)

	_, err = New(addrs, WithToken("vesta_a b"))
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.NotContains(t, err.Error(), "vesta_a", "the token is never quoted")
	_, err = New(addrs, WithTLS(nil))
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
}

func TestRateLimitIsWaitedOut(t *testing.T) {
	const tok = "vesta_bulk"
	g := guard(t, access.Client{Name: "bulk", Tokens: [][32]byte{access.HashToken(tok)}, Scopes: []access.Scope{"genid"},
		Rate: 50, Burst: 100})
	srv := rpctest.Start(t, rpctest.Config{Guard: g})
	c := newClient(t, []string{srv.Addr}, WithToken(tok))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// 100 IDs empty the bucket; the next batch waits ~1 s and gets its IDs
	// (the wait is far longer than the time between two calls, even on a
	// loaded machine).
	_, err := c.GenIds(ctx, 100)
	require.NoError(t, err)
	ids, err := c.GenIds(ctx, 50)
	require.NoError(t, err)
	assert.Len(t, ids, 50)
	st := g.Stats()
	assert.GreaterOrEqual(t, st.Clients[0].Limited, uint64(1), "the server refused, the client waited and tried again")
	assert.Equal(t, uint64(150), st.Clients[0].Ids)

	// A deadline sooner than the wait (the bucket is empty again: 100 IDs
	// are 2 s away): the refusal is the answer.
	short, cancelShort := context.WithTimeout(ctx, time.Millisecond)
	defer cancelShort()
	_, err = c.GenIds(short, 100)
	var rl *intf.RateLimitError
	if !errors.As(err, &rl) {
		// The deadline may also pass while the call is on its way.
		require.ErrorIs(t, err, context.DeadlineExceeded)
		return
	}
	assert.Equal(t, "bulk", rl.Client)
	assert.True(t, strings.Contains(err.Error(), "retry after"), err.Error())
}

// A health probe refused for the token's scope is an answer: the server is
// up again, though the probe's GenId was not allowed.
func TestProbeRefusedForScopeBringsTheServerBack(t *testing.T) {
	const tok = "vesta_decoder"
	g := guard(t, access.Client{Name: "decoder", Tokens: [][32]byte{access.HashToken(tok)}, Scopes: []access.Scope{"decode"}})
	srv := rpctest.Start(t, rpctest.Config{Guard: g})
	addr, dataDir := srv.Addr, srv.DataDir
	c := newClient(t, []string{addr}, WithToken(tok), WithCallTimeout(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.ExpId(ctx, 1)
	require.NoError(t, err)

	require.NoError(t, srv.Stop())
	_, err = c.ExpId(ctx, 1)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	require.True(t, c.eps[0].down.Load(), "no answer: down")

	rpctest.Start(t, rpctest.Config{Addr: addr, DataDir: dataDir, Guard: g})
	require.Eventually(t, func() bool { return !c.eps[0].down.Load() }, 10*time.Second, 5*time.Millisecond,
		"the probe's GenId is refused for its scope, and that answer brings the server back")
}

// WithDialer connects through the caller's dialer, and WithTLS makes the
// handshake over what it returns, checking the certificate against the
// address's host.
func TestDialerWithTLS(t *testing.T) {
	// Parallel: over net.Pipe, which buffers nothing, the failed handshake
	// below ends only at the dial timeout (both ends are writing).
	t.Parallel()
	ca := tlstest.NewCA(t, "server CA")
	serverTLS := certs(t, ca, nil).ServerConfig()
	f := &scripted{}
	dial := func(_ context.Context, addr string) (net.Conn, error) {
		srv := rpc.NewServer()
		if err := srv.RegisterName(rpcapi.ServiceName, f); err != nil {
			return nil, err
		}
		near, far := net.Pipe()
		go srv.ServeConn(tls.Server(far, serverTLS))
		return near, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := newClient(t, []string{"localhost:1"}, WithDialer(dial), WithTLS(tlstest.ClientConfig(ca, nil))).GenId(ctx)
	require.NoError(t, err)
	assert.Positive(t, id)

	// The certificate names localhost: dialled as another host, it fails.
	_, err = newClient(t, []string{"ids.example:1"}, WithDialer(dial), WithTLS(tlstest.ClientConfig(ca, nil))).GenId(ctx)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.ErrorContains(t, err, "ids.example")

	_, err = New([]string{"localhost:1"}, WithDialer(nil))
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.ErrorContains(t, err, "nil dialer")
}
