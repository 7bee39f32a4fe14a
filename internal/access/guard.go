package access

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/lograte"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// DefaultLogInterval is the least time between two warnings about refused
// calls; the ones in between are counted in the next.
const DefaultLogInterval = 10 * time.Second

// Options configure a Guard.
type Options struct {
	// Policy, when set, requires a known token on every call but the
	// health checks. nil: calls need no token.
	Policy *Policy
	// AddrRate and AddrBurst are a quota of IDs per remote address,
	// applied when there is no Policy (0: none). AddrBurst 0 means one
	// second's worth.
	AddrRate  float64
	AddrBurst int64
	// Now is the clock of the quotas; nil means ctxtime.Now (the monotonic
	// clock alone).
	Now func() time.Time
	// Logger receives the warnings about refused calls; nil means
	// slog.Default().
	Logger *slog.Logger
	// LogInterval spaces those warnings (default DefaultLogInterval).
	LogInterval time.Duration
	// MaxHold bounds how long TakeWait holds a call that ignored the
	// Retry-After of its last refusal (default DefaultMaxHold).
	MaxHold time.Duration
	// Sleep waits d or until ctx ends (TakeWait's holds); nil means a
	// timer. Tests pass one that moves their clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultMaxHold bounds the hold of a call that came back before the
// Retry-After of its last refusal.
const DefaultMaxHold = time.Second

// Guard decides each call: Authenticate (who), Authorize (may it), Take
// (is it within its quota). It is safe for concurrent use; SetPolicy
// swaps the policy while calls go on.
type Guard struct {
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
	maxHold time.Duration
	log     *slog.Logger
	logRate lograte.Limiter

	policy atomic.Pointer[policyState] // nil: no tokens required
	addrs  *addrLimiter                // nil: no quota per address

	refusals                      [len(reasons)]atomic.Uint64
	policyLoads, policyLoadErrors atomic.Uint64

	mu       sync.Mutex
	counters map[string]*clientCounters // by client name, kept across reloads
}

type policyState struct {
	p       *Policy
	clients []*clientState
}

// clientState is one client of the policy in force.
type clientState struct {
	name   string
	scopes scopeSet
	rate   float64
	burst  int64
	bucket *bucket // nil: no limit
	ctr    *clientCounters
}

type clientCounters struct {
	ids, denied, limited atomic.Uint64
}

// NewGuard returns a guard with the options' policy and quotas.
func NewGuard(o Options) (*Guard, error) {
	if math.IsNaN(o.AddrRate) || o.AddrRate < 0 || o.AddrRate > MaxRate {
		return nil, fmt.Errorf("access: AddrRate %v: want 0 (none) .. %g IDs per second", o.AddrRate, float64(MaxRate))
	}
	if o.AddrBurst < 0 || o.AddrBurst > MaxRate || (o.AddrRate == 0 && o.AddrBurst != 0) {
		return nil, fmt.Errorf("access: AddrBurst %d: want 0..%g, and only with an AddrRate", o.AddrBurst, float64(MaxRate))
	}
	g := &Guard{now: o.Now, log: o.Logger, counters: map[string]*clientCounters{}}
	g.logRate.Interval = o.LogInterval
	if g.now == nil {
		// Quotas and the log's rate compare times only: the monotonic
		// clock alone is read, once per call (time.Now reads two clocks).
		g.now = ctxtime.Now
	}
	g.sleep, g.maxHold = o.Sleep, o.MaxHold
	if g.sleep == nil {
		g.sleep = ctxtime.Sleep
	}
	if g.maxHold <= 0 {
		g.maxHold = DefaultMaxHold
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.logRate.Interval <= 0 {
		g.logRate.Interval = DefaultLogInterval
	}
	if o.AddrRate > 0 {
		burst := o.AddrBurst
		if burst == 0 {
			burst = int64(math.Ceil(o.AddrRate))
		}
		g.addrs = &addrLimiter{rate: o.AddrRate, burst: burst, m: map[string]*bucket{}}
	}
	if o.Policy != nil {
		g.SetPolicy(o.Policy)
	}
	return g, nil
}

// SetPolicy puts p in force for every call from now on. A client keeps
// its counters, and its quota bucket when its rate and burst are the
// same, so a reload neither resets nor refills a quota.
func (g *Guard) SetPolicy(p *Policy) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := map[string]*clientState{}
	if cur := g.policy.Load(); cur != nil {
		for _, c := range cur.clients {
			old[c.name] = c
		}
	}
	now := g.now()
	st := &policyState{p: p, clients: make([]*clientState, len(p.clients))}
	for i, c := range p.clients {
		cs := &clientState{name: c.Name, scopes: newScopeSet(c.Scopes), rate: c.Rate, burst: c.Burst}
		if prev := old[c.Name]; prev != nil && prev.rate == c.Rate && prev.burst == c.Burst {
			cs.bucket = prev.bucket
		} else if c.Rate > 0 {
			cs.bucket = newBucket(c.Rate, c.Burst, now)
		}
		if cs.ctr = g.counters[c.Name]; cs.ctr == nil {
			cs.ctr = new(clientCounters)
			g.counters[c.Name] = cs.ctr
		}
		st.clients[i] = cs
	}
	g.policy.Store(st)
	g.policyLoads.Add(1)
}

// PolicyLoadFailed counts a reload of the policy that failed (the old one
// stays in force); Stats reports it.
func (g *Guard) PolicyLoadFailed() { g.policyLoadErrors.Add(1) }

// RequiresToken says whether calls need a token (a policy is set).
func (g *Guard) RequiresToken() bool { return g.policy.Load() != nil }

// Caller is who made a call: a client of the policy, or anonymous when
// the guard requires no token.
type Caller struct{ c *clientState }

// Name is the client's name; "" for an anonymous caller.
func (c Caller) Name() string {
	if c.c == nil {
		return ""
	}
	return c.c.name
}

// Allows says whether the caller has scope s; an anonymous caller has
// every scope (the guard requires no token).
func (c Caller) Allows(s Scope) bool { return c.c == nil || c.c.scopes.has(s) }

// AllowsAnySegment says whether the caller may take the segment IDs of
// some tag.
func (c Caller) AllowsAnySegment() bool { return c.c == nil || c.c.scopes.anySegment() }

// AuthenticateHeader is Authenticate for the values of an HTTP request's
// Authorization header (nil when absent). remote is the caller's address,
// for the log.
func (g *Guard) AuthenticateHeader(values []string, remote string) (Caller, error) {
	if g.policy.Load() == nil {
		return Caller{}, nil
	}
	token, err := BearerToken(values)
	if err != nil {
		return Caller{}, g.refuse(err, remote)
	}
	return g.Authenticate(token, remote)
}

// Authenticate returns the client whose token this is: the token an RPC
// call carries (an empty one is refused with what an RPC caller does
// about it). Without a policy every caller is anonymous and allowed. The
// error is a *TokenError (errors.Is intf.ErrUnauthenticated).
func (g *Guard) Authenticate(token, remote string) (Caller, error) {
	st := g.policy.Load()
	if st == nil {
		return Caller{}, nil
	}
	return g.authenticate(st, token, remote)
}

// authenticate is Authenticate under the policy st.
func (g *Guard) authenticate(st *policyState, token, remote string) (Caller, error) {
	if token == "" { // never from AuthenticateHeader, which refuses a header without one
		return Caller{}, g.refuse(errNoCallToken, remote)
	}
	if err := CheckToken(token); err != nil {
		return Caller{}, g.refuse(err, remote)
	}
	i := st.p.find(HashToken(token))
	if i < 0 {
		return Caller{}, g.refuse(errUnknownToken, remote)
	}
	return Caller{st.clients[i]}, nil
}

// TokenCache remembers the token one connection last authenticated with
// and its client under the policy then in force, so that its next calls
// skip the hashing (AuthenticateCached). The zero value is empty; it is
// safe for concurrent use.
type TokenCache struct{ last atomic.Pointer[cachedToken] }

type cachedToken struct {
	st     *policyState // the policy the token was checked under
	token  string
	caller Caller
}

// AuthenticateCached is Authenticate with tc: a token equal (in constant
// time) to the one tc holds, under the same policy, is that client again
// without hashing it; after a reload (SetPolicy) or with another token it
// is checked afresh, and a success replaces what tc holds. A refusal is
// counted and logged as by Authenticate.
func (g *Guard) AuthenticateCached(tc *TokenCache, token, remote string) (Caller, error) {
	st := g.policy.Load()
	if st == nil {
		return Caller{}, nil
	}
	if e := tc.last.Load(); e != nil && e.st == st && sameToken(e.token, token) {
		return e.caller, nil
	}
	c, err := g.authenticate(st, token, remote)
	if err == nil {
		tc.last.Store(&cachedToken{st: st, token: token, caller: c})
	}
	return c, err
}

// sameToken compares two tokens in time that depends on their length
// only.
func sameToken(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := 0; i < len(a); i++ {
		v |= a[i] ^ b[i]
	}
	return subtle.ConstantTimeByteEq(v, 0) == 1
}

// Authorize says whether c has scope s: nil, or a *intf.ScopeError
// (errors.Is intf.ErrPermissionDenied) naming it.
func (g *Guard) Authorize(c Caller, s Scope, remote string) error {
	if c.Allows(s) {
		return nil
	}
	c.c.ctr.denied.Add(1)
	return g.refuse(&intf.ScopeError{Client: c.c.name, Scope: string(s)}, remote)
}

// Grant is n IDs taken from a quota for one call; Done settles it.
type Grant struct {
	c *clientState
	b *bucket
	n int
}

// Done settles the grant once the call is over: issued is how many IDs it
// issued, at most the n taken (0 when it failed). Every path charges what
// it hands out before handing it out, so nothing is charged here: the IDs
// not issued go back to the quota, and the ones issued are counted under
// the client.
func (gr Grant) Done(issued int) {
	if gr.b != nil && issued < gr.n {
		gr.b.give(gr.n - max(issued, 0))
	}
	if gr.c != nil && issued > 0 {
		gr.c.ctr.ids.Add(uint64(issued))
	}
}

// Take takes n IDs (1 for a single ID) from c's quota, or from the quota
// of remote's address when there is no policy and a per-address quota is
// set. Over the quota the error is a *intf.RateLimitError
// (errors.Is intf.ErrRateLimited) saying when a call of n will fit.
func (g *Guard) Take(c Caller, remote string, n int) (Grant, error) {
	gr, rl, _ := g.try(c, remote, n, false)
	if rl != nil {
		return Grant{}, g.limited(c, rl, remote)
	}
	return gr, nil
}

// limited counts and returns a refusal over c's quota.
func (g *Guard) limited(c Caller, rl *intf.RateLimitError, remote string) error {
	if c.c != nil {
		c.c.ctr.limited.Add(1)
	}
	return g.refuse(rl, remote)
}

// TakeWait is Take, but a call that comes back before the Retry-After of
// the last refusal of its quota — a client that ignores it — is held
// until then (at most MaxHold, or until ctx ends) and tried once more. So
// a client hammering the server while over its quota is answered at the
// pace it was told to keep: its refusals cost the server one per wait,
// not one per round trip, and the other clients keep the CPU. A client
// that keeps to the Retry-After is never held.
func (g *Guard) TakeWait(ctx context.Context, c Caller, remote string, n int) (Grant, error) {
	return g.takeWait(ctx, c, remote, n, false)
}

// takeWait is TakeWait; upTo takes what the quota holds now, at most n,
// rather than n (TakeRange).
func (g *Guard) takeWait(ctx context.Context, c Caller, remote string, n int, upTo bool) (Grant, error) {
	gr, rl, early := g.try(c, remote, n, upTo)
	if rl != nil && early > 0 {
		if g.sleep(ctx, min(early, g.maxHold)) == nil {
			gr, rl, _ = g.try(c, remote, n, upTo)
		}
	}
	if rl != nil {
		return Grant{}, g.limited(c, rl, remote)
	}
	return gr, nil
}

// quota is the bucket a call of c from remote takes from (nil: none),
// with its rate and burst.
func (g *Guard) quota(c Caller, remote string) (b *bucket, rate float64, burst int64) {
	switch {
	case c.c != nil:
		return c.c.bucket, c.c.rate, c.c.burst
	case g.addrs != nil && g.policy.Load() == nil:
		return g.addrs.get(hostOf(remote), g.now()), g.addrs.rate, g.addrs.burst
	}
	return nil, 0, 0
}

// try takes n IDs from the caller's quota (upTo: what it holds now, at
// most n, at least 1), counting nothing but a client's refusal.
func (g *Guard) try(c Caller, remote string, n int, upTo bool) (Grant, *intf.RateLimitError, time.Duration) {
	n = max(n, 1)
	b, rate, burst := g.quota(c, remote)
	if b == nil {
		return Grant{c: c.c, n: n}, nil, 0
	}
	var wait, early time.Duration
	if upTo {
		var got int
		if got, wait, early = b.takeUpTo(g.now(), n); got > 0 {
			return Grant{c: c.c, b: b, n: got}, nil, 0
		}
	} else {
		var ok bool
		if ok, wait, early = b.take(g.now(), n); ok {
			return Grant{c: c.c, b: b, n: n}, nil, 0
		}
	}
	return Grant{}, &intf.RateLimitError{Client: c.Name(), RetryAfter: wait, Rate: rate, Burst: burst}, early
}

// refuse counts a refusal by its reason, logs it within the log's rate, and returns err.
func (g *Guard) refuse(err error, remote string) error {
	reason := ReasonOf(err)
	g.refusals[reasonIndex(reason)].Add(1)
	ok, n := g.logRate.Allow(g.now())
	if !ok {
		return err
	}
	// err's message quotes no token (TokenError never does).
	g.log.Warn("access: call refused", "reason", string(reason), "remote", remote, "err", err,
		"refusedSinceLastWarning", n)
	return err
}

// ReasonOf is the reason of a refusal Guard returned; "" for other errors.
func ReasonOf(err error) Reason {
	var te *TokenError
	switch {
	case errors.As(err, &te):
		return te.Reason
	case errors.Is(err, intf.ErrPermissionDenied):
		return ReasonScope
	case errors.Is(err, intf.ErrRateLimited):
		return ReasonRateLimited
	case errors.Is(err, intf.ErrUnauthenticated):
		return ReasonUnknownToken
	}
	return ""
}
