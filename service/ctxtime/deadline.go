package ctxtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Deadline is a context.Context with a deadline whose timer is made only
// when something waits on it (Done): a server's call timeout around a call
// that almost always returns in nanoseconds, such as one ID from a unit
// with room, then costs a clock read instead of a timer, a cancel context
// registered with the request's and a channel. Until then Err compares the
// clock with the deadline itself, so a call that never waits still sees
// context.DeadlineExceeded once the deadline has passed.
//
// Stop releases it, like the CancelFunc of context.WithDeadline: it must
// be called when the call is over; afterwards the context is canceled.
type Deadline struct {
	parent context.Context
	at     time.Duration // this context's own deadline, a Monotonic reading; Deadline() reports the earlier of it and parent's
	cause  error

	state atomic.Int32 // fresh, made or stopped
	mu    sync.Mutex   // serialises making inner with Stop
	inner context.Context
	stop  context.CancelFunc
}

// The states of a Deadline: fresh (no timer), made (inner holds the timer),
// stopped (Stop came first: inner is a canceled context, if made at all).
const (
	fresh int32 = iota
	made
	stopped
)

// WithTimeoutCause is context.WithTimeoutCause(parent, d, cause) with the
// timer made on demand (Deadline).
func WithTimeoutCause(parent context.Context, d time.Duration, cause error) *Deadline {
	return WithTimeoutCauseFrom(parent, Monotonic(), d, cause)
}

// WithTimeoutCauseFrom is WithTimeoutCause for a call that began at start
// (a Monotonic reading the caller already took, e.g. to time the call):
// its deadline is start+d, and no clock is read.
func WithTimeoutCauseFrom(parent context.Context, start, d time.Duration, cause error) *Deadline {
	return &Deadline{parent: parent, at: start + d, cause: cause}
}

// Deadline reports the earlier of its own deadline and parent's.
func (c *Deadline) Deadline() (time.Time, bool) {
	own := At(c.at)
	if pd, ok := c.parent.Deadline(); ok && pd.Before(own) {
		return pd, true
	}
	return own, true
}

// Done makes the timer on first use: from then on it is a
// context.WithDeadlineCause of parent.
func (c *Deadline) Done() <-chan struct{} {
	if c.state.Load() == made {
		return c.inner.Done()
	}
	return c.made().Done()
}

// made returns inner, making it if need be: a deadline context of parent,
// or after Stop a canceled one.
func (c *Deadline) made() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner != nil {
		return c.inner
	}
	ctx, stop := context.WithDeadlineCause(c.parent, At(c.at), c.cause)
	c.inner, c.stop = ctx, stop
	if !c.state.CompareAndSwap(fresh, made) {
		stop() // Stop came first (it takes no lock when nothing was made)
	}
	return ctx
}

// Err is parent's error, or context.DeadlineExceeded once the deadline has
// passed (context.Cause then gives the cause), or context.Canceled after
// Stop.
func (c *Deadline) Err() error {
	switch c.state.Load() {
	case made:
		return c.inner.Err()
	case stopped:
		return c.made().Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if Monotonic() < c.at {
		return nil
	}
	// Past the deadline: inner, made now, is done at once (no timer), so
	// that Done and context.Cause agree with this answer.
	return c.made().Err()
}

// Value is parent's value, or inner's once made (context.Cause finds the
// cause through it).
func (c *Deadline) Value(key any) any {
	switch c.state.Load() {
	case made:
		return c.inner.Value(key)
	case stopped:
		return c.made().Value(key)
	}
	return c.parent.Value(key)
}

// Stop releases the timer, if one was made, and cancels the context.
func (c *Deadline) Stop() {
	if c.state.CompareAndSwap(fresh, stopped) {
		return // nothing made: nothing to release
	}
	c.mu.Lock()
	stop := c.stop
	c.state.Store(stopped)
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}
