package client

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// deadlineWindow is how much later than the call timeout a call whose
// caller gave no context deadline may end: the calls that start within
// one window share one deadline context. A long call timeout gets a
// longer window (d/64), so that at most about 65 windows' contexts and
// timers are alive at once.
const deadlineWindow = 10 * time.Millisecond

// windowOf is the window of call timeout d.
func windowOf(d time.Duration) time.Duration { return max(deadlineWindow, d/64) }

// sharedDeadlines are the call timeout's contexts for callers whose
// context is context.Background (or TODO): one context per window, its
// deadline the window's start plus the call timeout plus the window, so
// every call of the window gets between the call timeout and one window
// (10 ms, or d/64 for a long d) more. A context per call would arm a runtime
// timer per call, which costs a round trip on an idle machine more than
// the rest of the client (BenchmarkGenId: 0.76 against 0.89 of bare
// net/rpc without a call timeout). Contexts that can be cancelled keep a
// deadline of their own (call).
type sharedDeadlines struct {
	parent context.Context // the client's: Close cancels the calls too
	cur    atomic.Pointer[windowDeadline]
	mu     sync.Mutex // one new window at a time
}

// windowDeadline is the context of the calls that start before until (a
// ctxtime.Monotonic reading).
type windowDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc // kept, not called: its deadline ends it
	until  time.Duration
}

// get returns the deadline context of a call starting at now (a
// ctxtime.Monotonic reading, the call's own: no clock is read here) with
// timeout d (the same d for every call of a client).
func (s *sharedDeadlines) get(now, d time.Duration) context.Context {
	if w := s.cur.Load(); w != nil && now < w.until {
		return w.ctx
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.cur.Load(); w != nil && now < w.until {
		return w.ctx
	}
	w := windowOf(d)
	ctx, cancel := context.WithDeadline(s.parent, ctxtime.At(now+d+w))
	s.cur.Store(&windowDeadline{ctx: ctx, cancel: cancel, until: now + w})
	return ctx
}
