package access_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
)

// fakeClock is the quotas' clock, moved by the test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestParseScope(t *testing.T) {
	for _, s := range []string{"genid", "decode", "metrics", "segment:*", "segment:order", "segment:a.b_c-1"} {
		got, err := access.ParseScope(s)
		require.NoError(t, err, s)
		assert.Equal(t, access.Scope(s), got)
	}
	for _, s := range []string{"", "GenId", "admin", "segment:", "segment:a b", "segment:x/y", "segment"} {
		_, err := access.ParseScope(s)
		assert.Error(t, err, s)
	}
	assert.Equal(t, access.Scope("segment:order"), access.SegmentScope("order"))
}

func TestNewToken(t *testing.T) {
	a, err := access.NewToken()
	require.NoError(t, err)
	b, err := access.NewToken()
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, access.TokenPrefix))
	assert.Len(t, a, len(access.TokenPrefix)+43, "32 bytes in unpadded base64url")
	require.NoError(t, access.CheckToken(a), "a new token is a valid token")
	sum := sha256.Sum256([]byte(a))
	assert.Equal(t, hex.EncodeToString(sum[:]), access.HashTokenHex(a))
}

func TestBearerToken(t *testing.T) {
	const tok = "vesta_abc-DEF_123~+/=="
	for _, h := range []string{"Bearer " + tok, "bearer " + tok, "BEARER  " + tok} {
		got, err := access.BearerToken([]string{h})
		require.NoError(t, err, h)
		assert.Equal(t, tok, got)
	}
	secret := "s3cr3t"
	for _, c := range []struct {
		values []string
		reason access.Reason
	}{
		{nil, access.ReasonNoToken},
		{[]string{""}, access.ReasonNoToken},
		{[]string{"  "}, access.ReasonNoToken},
		{[]string{"Bearer " + secret, "Bearer " + secret}, access.ReasonMalformed},
		{[]string{"Basic " + secret}, access.ReasonBadScheme},
		{[]string{"Bearerx" + secret}, access.ReasonBadScheme},
		{[]string{secret}, access.ReasonBadScheme},
		{[]string{"Bearer"}, access.ReasonMalformed},
		{[]string{"Bearer    "}, access.ReasonMalformed},
		{[]string{"Bearer " + secret + " x"}, access.ReasonMalformed},
		{[]string{"Bearer " + secret + "\t"}, access.ReasonMalformed},
		{[]string{"Bearer " + secret + "\x00"}, access.ReasonMalformed},
		{[]string{"Bearer " + secret + "\n"}, access.ReasonMalformed},
		{[]string{"Bearer " + secret + "é"}, access.ReasonMalformed},
		{[]string{"Bearer =" + secret}, access.ReasonMalformed},
		{[]string{"Bearer " + secret + "=x"}, access.ReasonMalformed},
		{[]string{"Bearer " + strings.Repeat("a", access.MaxHeaderBytes)}, access.ReasonOversized},
	} {
		_, err := access.BearerToken(c.values)
		require.Error(t, err, "%q", c.values)
		assert.ErrorIs(t, err, intf.ErrUnauthenticated)
		assert.Equal(t, c.reason, access.ReasonOf(err), "%q", c.values)
		assert.NotContains(t, err.Error(), secret, "an error never quotes the token")
	}
}

func sum(token string) [32]byte { return access.HashToken(token) }

func TestNewPolicyRefuses(t *testing.T) {
	good := access.Client{Name: "orders", Tokens: [][32]byte{sum("a")}, Scopes: []access.Scope{"genid"}}
	for field, c := range map[string][]access.Client{
		"name":         {{Name: "", Tokens: good.Tokens}},
		"name ":        {{Name: "a b", Tokens: good.Tokens}},
		"name  ":       {{Name: strings.Repeat("x", 65), Tokens: good.Tokens}},
		"name   ":      {good, {Name: "orders", Tokens: [][32]byte{sum("b")}}},
		"tokenSHA256":  {{Name: "x"}},
		"tokenSHA256 ": {good, {Name: "other", Tokens: good.Tokens}},
		"scopes":       {{Name: "x", Tokens: good.Tokens, Scopes: []access.Scope{"admin"}}},
		"rate":         {{Name: "x", Tokens: good.Tokens, Rate: -1}},
		"rate ":        {{Name: "x", Tokens: good.Tokens, Rate: 2e9}},
		"burst":        {{Name: "x", Tokens: good.Tokens, Burst: 5}},
		"burst ":       {{Name: "x", Tokens: good.Tokens, Rate: 5, Burst: -1}},
	} {
		_, err := access.NewPolicy(c)
		var ce *access.ClientError
		require.ErrorAs(t, err, &ce, field)
		assert.Equal(t, strings.TrimSpace(field), ce.Field)
		assert.Equal(t, len(c)-1, ce.Index, "the last client is the bad one")
	}
	p, err := access.NewPolicy([]access.Client{{Name: "x", Tokens: good.Tokens, Rate: 2.5}})
	require.NoError(t, err)
	assert.Equal(t, int64(3), p.Clients()[0].Burst, "burst defaults to one second's worth, rounded up")
}

func newGuard(t *testing.T, clock *fakeClock, clients ...access.Client) *access.Guard {
	t.Helper()
	var p *access.Policy
	if clients != nil {
		var err error
		p, err = access.NewPolicy(clients)
		require.NoError(t, err)
	}
	g, err := access.NewGuard(access.Options{Policy: p, Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return g
}

func TestGuardWithoutPolicy(t *testing.T) {
	g := newGuard(t, newFakeClock())
	assert.False(t, g.RequiresToken())
	c, err := g.AuthenticateHeader(nil, "1.2.3.4:5")
	require.NoError(t, err)
	assert.Equal(t, "", c.Name())
	require.NoError(t, g.Authorize(c, access.ScopeMetrics, ""))
	gr, err := g.Take(c, "1.2.3.4:5", 1_000_000)
	require.NoError(t, err)
	gr.Done(1_000_000)
}

func TestGuardScopes(t *testing.T) {
	g := newGuard(t, newFakeClock(),
		access.Client{Name: "orders", Tokens: [][32]byte{sum("tok-orders"), sum("tok-orders-new")},
			Scopes: []access.Scope{"genid", "segment:order"}},
		access.Client{Name: "ops", Tokens: [][32]byte{sum("tok-ops")}, Scopes: []access.Scope{"metrics", "decode", "segment:*"}})
	require.True(t, g.RequiresToken())

	_, err := g.AuthenticateHeader(nil, "")
	assert.Equal(t, access.ReasonNoToken, access.ReasonOf(err))
	_, err = g.AuthenticateHeader([]string{"Bearer tok-nobody"}, "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)
	assert.Equal(t, access.ReasonUnknownToken, access.ReasonOf(err))
	_, err = g.Authenticate("tok ops", "")
	assert.Equal(t, access.ReasonMalformed, access.ReasonOf(err))

	for _, tok := range []string{"tok-orders", "tok-orders-new"} {
		c, err := g.AuthenticateHeader([]string{"Bearer " + tok}, "")
		require.NoError(t, err)
		assert.Equal(t, "orders", c.Name(), "both tokens of a client in rotation work")
		require.NoError(t, g.Authorize(c, access.ScopeGenId, ""))
		require.NoError(t, g.Authorize(c, access.SegmentScope("order"), ""))
		err = g.Authorize(c, access.SegmentScope("invoice"), "")
		var se *intf.ScopeError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, intf.ScopeError{Client: "orders", Scope: "segment:invoice"}, *se)
		assert.ErrorIs(t, err, intf.ErrPermissionDenied)
		assert.ErrorContains(t, g.Authorize(c, access.ScopeMetrics, ""), "lacks scope metrics")
		assert.True(t, c.AllowsAnySegment())
	}
	ops, err := g.Authenticate("tok-ops", "")
	require.NoError(t, err)
	assert.True(t, ops.Allows(access.SegmentScope("anything")), "segment:* is every tag")
	assert.True(t, ops.Allows(access.ScopeDecode))
	assert.False(t, ops.Allows(access.ScopeGenId))

	st := g.Stats()
	assert.Equal(t, uint64(1), st.Refusals[access.ReasonNoToken])
	assert.Equal(t, uint64(1), st.Refusals[access.ReasonUnknownToken])
	assert.Equal(t, uint64(1), st.Refusals[access.ReasonMalformed])
	assert.Equal(t, uint64(4), st.Refusals[access.ReasonScope])
	assert.Equal(t, []access.ClientStats{{Name: "orders", Denied: 4}, {Name: "ops"}}, st.Clients)
}

func TestQuotaCountsIds(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, clock, access.Client{Name: "bulk", Tokens: [][32]byte{sum("t")}, Scopes: []access.Scope{"genid"},
		Rate: 1000, Burst: 100})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)

	gr, err := g.Take(c, "", 60)
	require.NoError(t, err)
	gr.Done(60)
	gr, err = g.Take(c, "", 40)
	require.NoError(t, err)
	gr.Done(40)
	_, err = g.Take(c, "", 1)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "a batch counts as its size: 100 IDs took the whole burst")
	assert.Equal(t, time.Millisecond, rl.RetryAfter, "one ID at 1000/s")
	assert.Equal(t, intf.RateLimitError{Client: "bulk", RetryAfter: time.Millisecond, Rate: 1000, Burst: 100}, *rl)
	assert.ErrorIs(t, err, intf.ErrRateLimited)

	_, err = g.Take(c, "", 50)
	require.ErrorAs(t, err, &rl)
	assert.Equal(t, 50*time.Millisecond, rl.RetryAfter)
	clock.Advance(50 * time.Millisecond)
	gr, err = g.Take(c, "", 50)
	require.NoError(t, err)
	gr.Done(0) // the call failed: the IDs go back
	gr, err = g.Take(c, "", 50)
	require.NoError(t, err, "refunded")
	gr.Done(50)

	// A batch above the burst passes once the bucket is full, and leaves
	// it in debt: the rate holds on average.
	clock.Advance(time.Second)
	gr, err = g.Take(c, "", 500)
	require.NoError(t, err)
	gr.Done(500)
	_, err = g.Take(c, "", 1)
	require.ErrorAs(t, err, &rl)
	assert.Equal(t, 401*time.Millisecond, rl.RetryAfter, "400 of debt and 1 to take, at 1000/s")
	clock.Advance(400 * time.Millisecond)
	_, err = g.Take(c, "", 1)
	require.Error(t, err)
	clock.Advance(time.Millisecond)
	gr, err = g.Take(c, "", 1)
	require.NoError(t, err)
	gr.Done(1)

	st := g.Stats()
	assert.Equal(t, []access.ClientStats{{Name: "bulk", Ids: 651, Limited: 4}}, st.Clients)
	assert.Equal(t, uint64(4), st.Refusals[access.ReasonRateLimited])
}

// Over a long run, a client driving as hard as it can gets its rate and
// no more, whatever its batch sizes.
func TestQuotaHoldsTheRate(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, clock, access.Client{Name: "bulk", Tokens: [][32]byte{sum("t")}, Rate: 10_000, Burst: 2_000})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	issued := 0
	sizes := []int{1, 7000, 300, 50_000, 1000}
	for i := 0; clock.Now().Before(time.Unix(1_800_000_100, 0)); i++ { // 100 s
		gr, err := g.Take(c, "", sizes[i%len(sizes)])
		var rl *intf.RateLimitError
		if errors.As(err, &rl) {
			clock.Advance(rl.RetryAfter)
			continue
		}
		require.NoError(t, err)
		gr.Done(sizes[i%len(sizes)])
		issued += sizes[i%len(sizes)]
	}
	// rate × 100 s, plus the first burst and at most one batch of debt.
	assert.LessOrEqual(t, issued, 10_000*100+2_000+50_000)
	assert.GreaterOrEqual(t, issued, 10_000*100-50_000)
}

// A caller that comes back before the Retry-After of its refusal is held
// until then and tried again; one that keeps to it is never held.
func TestTakeWaitHoldsTheEarly(t *testing.T) {
	clock := newFakeClock()
	var held []time.Duration
	p, err := access.NewPolicy([]access.Client{{Name: "bulk", Tokens: [][32]byte{sum("t")}, Rate: 100, Burst: 10}})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
		Sleep: func(_ context.Context, d time.Duration) error {
			held = append(held, d)
			clock.Advance(d)
			return nil
		}})
	require.NoError(t, err)
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	ctx := context.Background()

	gr, err := g.TakeWait(ctx, c, "", 10)
	require.NoError(t, err)
	gr.Done(10)
	_, err = g.TakeWait(ctx, c, "", 5)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "the first refusal is answered at once")
	assert.Equal(t, 50*time.Millisecond, rl.RetryAfter)
	assert.Empty(t, held)

	clock.Advance(10 * time.Millisecond) // back after 10 ms of the 50 it was told
	gr, err = g.TakeWait(ctx, c, "", 5)
	require.NoError(t, err, "held until the told time, then served")
	gr.Done(5)
	assert.Equal(t, []time.Duration{40 * time.Millisecond}, held)

	clock.Advance(time.Second) // a client that waits is not held
	gr, err = g.TakeWait(ctx, c, "", 10)
	require.NoError(t, err)
	gr.Done(10)
	_, err = g.TakeWait(ctx, c, "", 10)
	require.Error(t, err)
	assert.Len(t, held, 1)

	// A call for fewer IDs, early too, is held as well.
	_, err = g.TakeWait(ctx, c, "", 1) // still within the 100 ms told
	require.NoError(t, err)
	assert.Equal(t, time.Duration(100*time.Millisecond), held[1])
	st := g.Stats()
	assert.Equal(t, uint64(2), st.Clients[0].Limited, "a held call that is served is no refusal")
}

func TestTakeWaitGivesUpWithTheContext(t *testing.T) {
	clock := newFakeClock()
	p, err := access.NewPolicy([]access.Client{{Name: "bulk", Tokens: [][32]byte{sum("t")}, Rate: 1, Burst: 1}})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
		Sleep: func(context.Context, time.Duration) error { return context.Canceled }})
	require.NoError(t, err)
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	gr, err := g.TakeWait(context.Background(), c, "", 1)
	require.NoError(t, err)
	gr.Done(1)
	_, err = g.TakeWait(context.Background(), c, "", 1)
	require.ErrorIs(t, err, intf.ErrRateLimited)
	_, err = g.TakeWait(context.Background(), c, "", 1)
	require.ErrorIs(t, err, intf.ErrRateLimited, "the hold ended early: refused")
}

func TestReloadKeepsQuotaAndCounters(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, clock, access.Client{Name: "a", Tokens: [][32]byte{sum("t1")}, Rate: 10, Burst: 10})
	c, err := g.Authenticate("t1", "")
	require.NoError(t, err)
	gr, err := g.Take(c, "", 10)
	require.NoError(t, err)
	gr.Done(10)

	// The same client with a new token and a new scope: its bucket (empty)
	// and its counters stay; the old token no longer works.
	p, err := access.NewPolicy([]access.Client{{Name: "a", Tokens: [][32]byte{sum("t2")}, Rate: 10, Burst: 10},
		{Name: "b", Tokens: [][32]byte{sum("t3")}}})
	require.NoError(t, err)
	g.SetPolicy(p)
	_, err = g.Authenticate("t1", "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)
	c, err = g.Authenticate("t2", "")
	require.NoError(t, err)
	_, err = g.Take(c, "", 1)
	assert.ErrorIs(t, err, intf.ErrRateLimited, "a reload does not refill the quota")
	st := g.Stats()
	assert.Equal(t, uint64(10), st.Clients[0].Ids)
	assert.Equal(t, uint64(2), st.PolicyLoads)

	// A new rate is a new bucket, full.
	p, err = access.NewPolicy([]access.Client{{Name: "a", Tokens: [][32]byte{sum("t2")}, Rate: 20}})
	require.NoError(t, err)
	g.SetPolicy(p)
	c, err = g.Authenticate("t2", "")
	require.NoError(t, err)
	gr, err = g.Take(c, "", 20)
	require.NoError(t, err)
	gr.Done(20)
}

// A connection's cache answers its token as Authenticate does: a known
// token, another one, a refused one, and no longer after a reload that
// dropped it.
func TestAuthenticateCached(t *testing.T) {
	g := newGuard(t, newFakeClock(), access.Client{Name: "a", Tokens: [][32]byte{sum("t1")}},
		access.Client{Name: "b", Tokens: [][32]byte{sum("t2")}})
	var tc access.TokenCache
	for _, tok := range []string{"t1", "t1", "t2", "t1"} {
		c, err := g.AuthenticateCached(&tc, tok, "")
		require.NoError(t, err)
		want, err := g.Authenticate(tok, "")
		require.NoError(t, err)
		assert.Equal(t, want.Name(), c.Name(), tok)
	}
	_, err := g.AuthenticateCached(&tc, "t3", "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)
	_, err = g.AuthenticateCached(&tc, "t1", "")
	require.NoError(t, err, "a refusal leaves the cache as it was")
	_, err = g.AuthenticateCached(&tc, "t1x", "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated, "a longer token is not the cached one")
	_, err = g.AuthenticateCached(&tc, "", "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)

	p, err := access.NewPolicy([]access.Client{{Name: "b", Tokens: [][32]byte{sum("t2")}}})
	require.NoError(t, err)
	g.SetPolicy(p)
	_, err = g.AuthenticateCached(&tc, "t1", "")
	assert.ErrorIs(t, err, intf.ErrUnauthenticated, "the reload dropped t1: the cache does not keep it")
	st := g.Stats()
	assert.Equal(t, uint64(3), st.Refusals[access.ReasonUnknownToken], "each refusal counted, as by Authenticate")
	assert.Equal(t, uint64(1), st.Refusals[access.ReasonNoToken])
}

func TestQuotaPerAddress(t *testing.T) {
	clock := newFakeClock()
	g, err := access.NewGuard(access.Options{AddrRate: 100, AddrBurst: 10, Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	gr, err := g.Take(access.Caller{}, "10.0.0.1:1000", 10)
	require.NoError(t, err)
	gr.Done(10)
	_, err = g.Take(access.Caller{}, "10.0.0.1:2000", 1)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "the port does not matter: the address is the unit")
	assert.Equal(t, "", rl.Client)
	assert.Contains(t, rl.Error(), "this address")
	gr, err = g.Take(access.Caller{}, "[::1]:1000", 10)
	require.NoError(t, err, "another address has its own quota")
	gr.Done(10)
	assert.Equal(t, 2, g.Stats().Addresses)
	clock.Advance(11 * time.Second)
	gr, err = g.Take(access.Caller{}, "10.0.0.2:1", 1)
	require.NoError(t, err)
	gr.Done(1)
	assert.Equal(t, 1, g.Stats().Addresses, "full buckets are forgotten")

	for _, o := range []access.Options{{AddrRate: -1}, {AddrBurst: 3}, {AddrRate: 1, AddrBurst: -1}} {
		_, err := access.NewGuard(o)
		assert.Error(t, err, "%+v", o)
	}
}

func TestRefusalsAreLoggedWithinARate(t *testing.T) {
	clock := newFakeClock()
	var logs syncbuf.Buffer
	p, err := access.NewPolicy([]access.Client{{Name: "a", Tokens: [][32]byte{sum("good")}}})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Now: clock.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	const secret = "guessed-token"
	for range 100 {
		_, err := g.Authenticate(secret, "10.1.2.3:4")
		require.Error(t, err)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "call refused"), logs.String())
	clock.Advance(access.DefaultLogInterval)
	_, err = g.Authenticate(secret, "10.1.2.3:4")
	require.Error(t, err)
	assert.Equal(t, 2, strings.Count(logs.String(), "call refused"))
	assert.Contains(t, logs.String(), "refusedSinceLastWarning=99")
	assert.Contains(t, logs.String(), "remote=10.1.2.3:4")
	assert.NotContains(t, logs.String(), secret, "a token is never logged")
	assert.Equal(t, uint64(101), g.Stats().Refusals[access.ReasonUnknownToken])
}

func ExampleGuard() {
	token := "vesta_example-token" // from access.NewToken, given to the client
	policy, err := access.NewPolicy([]access.Client{{
		Name:   "orders",
		Tokens: [][32]byte{access.HashToken(token)}, // the server keeps only the digest
		Scopes: []access.Scope{access.ScopeGenId},
		Rate:   1000, Burst: 100,
	}})
	if err != nil {
		panic(err)
	}
	g, err := access.NewGuard(access.Options{Policy: policy})
	if err != nil {
		panic(err)
	}
	caller, err := g.AuthenticateHeader([]string{"Bearer " + token}, "192.0.2.1:5000")
	fmt.Println(caller.Name(), err)
	fmt.Println(g.Authorize(caller, access.ScopeMetrics, "192.0.2.1:5000"))
	grant, err := g.Take(caller, "192.0.2.1:5000", 100) // a batch of 100 costs 100
	fmt.Println(err)
	grant.Done(100)
	_, err = g.Take(caller, "192.0.2.1:5000", 100)
	fmt.Println(errors.Is(err, intf.ErrRateLimited))
	// Output:
	// orders <nil>
	// permission denied: client "orders" lacks scope metrics
	// <nil>
	// true
}
