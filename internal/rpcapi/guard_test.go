package rpcapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/rpc"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// failing is an IdService whose batches fail: the quota taken for them
// must go back.
type failing struct{ recorder }

func (failing) GenIds(context.Context, int) ([]intf.Id, error) { return nil, intf.ErrNotPersisted }

// decoder answers the decode calls too.
type decoder struct{ recorder }

func (decoder) ExpId(_ context.Context, id intf.Id) (intf.IdFields, error) {
	return intf.Id(id).Fields(), nil
}
func (decoder) MakeId(context.Context, intf.MakeIdRequest) (intf.Id, error) {
	return 7, nil
}
func (decoder) TransTime(context.Context, int64, intf.IdType) (time.Time, error) {
	return time.Unix(0, 0), nil
}

// guardedPipe serves recv (for peer) over an in-memory connection whose
// calls carry token.
func guardedPipe(t *testing.T, recv *Receiver, peer, token string) *Conn {
	t.Helper()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, recv.ForPeer(peer)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), ServiceName, WithToken(token))
	t.Cleanup(func() { c.Close() })
	return c
}

func TestReceiverChecksEveryMethod(t *testing.T) {
	p, err := access.NewPolicy([]access.Client{
		{Name: "gen", Tokens: [][32]byte{access.HashToken("tok-gen")}, Scopes: []access.Scope{"genid", "segment:order"}},
		{Name: "dec", Tokens: [][32]byte{access.HashToken("tok-dec")}, Scopes: []access.Scope{"decode"}},
	})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	seg := &segmentStub{deadline: make(chan bool, 100), next: map[string]int64{"order": 1, "invoice": 1}}
	recv := NewReceiver(&decoder{recorder{deadline: make(chan bool, 100)}}, 100, WithSegments(seg), WithGuard(g))
	require.True(t, recv.Guarded())
	ctx := context.Background()
	calls := map[string]func(c *Conn) error{
		"GenId":     func(c *Conn) error { _, err := c.GenId(ctx); return err },
		"GenIds":    func(c *Conn) error { _, err := c.GenIds(ctx, 3); return err },
		"ExpId":     func(c *Conn) error { _, err := c.ExpId(ctx, 1); return err },
		"MakeId":    func(c *Conn) error { _, err := c.MakeId(ctx, intf.MakeIdRequest{Time: 1, Seq: 1}); return err },
		"TransTime": func(c *Conn) error { _, err := c.TransTime(ctx, 1, intf.MaxPeak); return err },
		"Segment":   func(c *Conn) error { _, err := c.NextIds(ctx, "order", 2); return err },
	}
	none := guardedPipe(t, recv, "10.0.0.1:1", "")
	bad := guardedPipe(t, recv, "10.0.0.1:2", "tok-nobody")
	gen := guardedPipe(t, recv, "10.0.0.1:3", "tok-gen")
	dec := guardedPipe(t, recv, "10.0.0.1:4", "tok-dec")
	for name, call := range calls {
		assert.ErrorIs(t, call(none), intf.ErrUnauthenticated, name)
		assert.ErrorContains(t, call(none), "client.WithToken", "%s: an RPC caller is told what it does", name)
		assert.NotContains(t, call(none).Error(), "Authorization", "%s: an RPC call has no header", name)
		assert.ErrorIs(t, call(bad), intf.ErrUnauthenticated, name)
		var se *intf.ScopeError
		switch name {
		case "GenId", "GenIds", "Segment":
			assert.NoError(t, call(gen), name)
			require.ErrorAs(t, call(dec), &se, name)
		default:
			assert.NoError(t, call(dec), name)
			require.ErrorAs(t, call(gen), &se, name)
		}
	}
	var se *intf.ScopeError
	_, err = gen.NextIds(ctx, "invoice", 1)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "segment:invoice", se.Scope)
	_, err = gen.NextIds(ctx, "bad tag", 1)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument, "a malformed tag is named as such, not as a scope")
	assert.Equal(t, uint64(1+3+2), g.Stats().Clients[0].Ids, "GenId 1, GenIds 3, segment 2")
}

func TestReceiverQuotaPerAddress(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	g, err := access.NewGuard(access.Options{AddrRate: 10, AddrBurst: 10, Now: func() time.Time { return now },
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	recv := NewReceiver(&failing{recorder{deadline: make(chan bool, 100)}}, 100, WithGuard(g))
	ctx := context.Background()
	a := guardedPipe(t, recv, "10.0.0.1:1", "")
	_, err = a.GenIds(ctx, 10)
	require.ErrorIs(t, err, intf.ErrNotPersisted)
	_, err = a.GenIds(ctx, 10)
	require.ErrorIs(t, err, intf.ErrNotPersisted, "a failed batch gives its IDs back to the quota")
	okRecv := NewReceiver(&recorder{deadline: make(chan bool, 100)}, 100, WithGuard(g))
	a2 := guardedPipe(t, okRecv, "10.0.0.1:2", "")
	_, err = a2.GenIds(ctx, 10)
	require.NoError(t, err)
	_, err = a2.GenIds(ctx, 1)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "the same address, another connection: one quota")
	assert.Equal(t, 100*time.Millisecond, rl.RetryAfter)
	b := guardedPipe(t, okRecv, "10.0.0.2:1", "")
	_, err = b.GenIds(ctx, 10)
	require.NoError(t, err, "another address")
}

func TestAccessErrorsSurviveTheWire(t *testing.T) {
	got := overGob(t, ToWire(errors.Join(errors.New("ctx"), &intf.ScopeError{Client: "a", Scope: "genid"})))
	assert.Equal(t, CodePermissionDenied, got.Code)
	var se *intf.ScopeError
	require.ErrorAs(t, got, &se)
	assert.Equal(t, "genid", se.Scope)

	got = overGob(t, ToWire(&intf.RateLimitError{Client: "a", RetryAfter: 1500 * time.Millisecond, Rate: 10, Burst: 5}))
	assert.Equal(t, CodeRateLimited, got.Code)
	var rl *intf.RateLimitError
	require.ErrorAs(t, got, &rl)
	assert.Equal(t, intf.RateLimitError{Client: "a", RetryAfter: 1500 * time.Millisecond, Rate: 10, Burst: 5}, *rl)

	_, err := access.BearerToken(nil)
	got = overGob(t, ToWire(err))
	assert.Equal(t, CodeUnauthenticated, got.Code)
	assert.ErrorIs(t, got, intf.ErrUnauthenticated)
}
