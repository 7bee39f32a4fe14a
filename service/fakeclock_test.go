package service_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/service"
)

// fakeClock is a Clock whose time only moves when a test moves it, or when
// a caller waits: WaitUntil jumps the time forward to the target at once,
// so a service that runs out of a time unit's sequence continues without
// sleeping. It is safe for concurrent use (one atomic word).
type fakeClock struct {
	now   atomic.Int64
	waits atomic.Int64 // WaitUntil calls that had to move the time
}

var _ service.Clock = (*fakeClock)(nil)

// newFakeClock starts a fake clock at t.
func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.now.Store(t.UnixNano())
	return c
}

// testStart is a fixed instant the fake clocks start at: well inside the
// lifetime of both layouts, and on a second boundary so that unit
// arithmetic in the tests stays readable.
var testStart = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func (c *fakeClock) NowNanos() int64 { return c.now.Load() }

// WaitUntil raises the time to t (never lowers it) unless ctx is done.
func (c *fakeClock) WaitUntil(ctx context.Context, t int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		cur := c.now.Load()
		if cur >= t {
			return nil
		}
		if c.now.CompareAndSwap(cur, t) {
			c.waits.Add(1)
			return nil
		}
	}
}

// Set moves the clock to t, forwards or backwards: tests use it to model a
// machine whose clock is behind after a restart.
func (c *fakeClock) Set(t time.Time) { c.now.Store(t.UnixNano()) }

// Advance moves the clock by d (negative d steps it back).
func (c *fakeClock) Advance(d time.Duration) { c.now.Add(int64(d)) }

// Now returns the clock's time.
func (c *fakeClock) Now() time.Time { return time.Unix(0, c.now.Load()).UTC() }

// steppingClock is a raw time source that misbehaves: it advances by step
// on every read, but every period reads it jumps back by back. It breaks the
// Clock contract (NowNanos must never decrease) on purpose, to prove that
// the populators never repeat or reorder IDs when the time they read goes
// backwards. WaitUntil advances the time to the target like fakeClock.
type steppingClock struct {
	now    atomic.Int64
	reads  atomic.Int64
	step   int64
	period int64
	back   int64
	backs  atomic.Int64 // how many times it went back
}

var _ service.Clock = (*steppingClock)(nil)

func newSteppingClock(start time.Time, step time.Duration, period int64, back time.Duration) *steppingClock {
	c := &steppingClock{step: int64(step), period: period, back: int64(back)}
	c.now.Store(start.UnixNano())
	return c
}

func (c *steppingClock) NowNanos() int64 {
	if c.reads.Add(1)%c.period == 0 {
		c.backs.Add(1)
		return c.now.Add(-c.back)
	}
	return c.now.Add(c.step)
}

func (c *steppingClock) WaitUntil(ctx context.Context, t int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		cur := c.now.Load()
		if cur >= t || c.now.CompareAndSwap(cur, t) {
			return nil
		}
	}
}

// countingClock is the benchmark clock: each read advances an atomic
// counter, and the time moves one unit every perUnit reads, so the sequence
// of a unit never runs out and the benchmark measures CPU cost only.
type countingClock struct {
	calls     atomic.Int64
	startNano int64
	unitNanos int64
	perUnit   int64
}

var _ service.Clock = (*countingClock)(nil)

func newCountingClock(start time.Time, unit time.Duration, perUnit int64) *countingClock {
	return &countingClock{startNano: start.UnixNano(), unitNanos: int64(unit), perUnit: perUnit}
}

func (c *countingClock) NowNanos() int64 {
	n := c.calls.Add(1)
	return c.startNano + n/c.perUnit*c.unitNanos
}

// WaitUntil should not be needed (perUnit is below the sequence size), but
// stays correct: it pushes the counter far enough to reach t.
func (c *countingClock) WaitUntil(ctx context.Context, t int64) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := c.calls.Load()
		if c.startNano+n/c.perUnit*c.unitNanos >= t {
			return nil
		}
		need := (t - c.startNano + c.unitNanos - 1) / c.unitNanos * c.perUnit
		c.calls.CompareAndSwap(n, need)
	}
}
