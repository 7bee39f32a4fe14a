package service

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/ctxtime"
)

// Clock is the time source of a Service. NowNanos must never decrease.
type Clock interface {
	// NowNanos returns nanoseconds since the Unix epoch.
	NowNanos() int64
	// WaitUntil blocks until NowNanos() >= t, or returns ctx's error.
	WaitUntil(ctx context.Context, t int64) error
}

// fineWindow is the end of a wait that is not slept on a Go timer: Go's
// timers wake up to a millisecond late on these machines (the netpoller
// waits in whole milliseconds), which would lose most of a millisecond
// unit. It is slept with finePause (nanosleep with 1 ns timer slack), which
// wakes some 50 µs late here. That is not spun away: a unit opened 50 µs
// late still has its IDs handed out within it, and a saturated populator
// catches up a unit that a later wake skipped (catchUpWindow), so spinning
// would buy nothing but burnt CPU.
const fineWindow = 2 * time.Millisecond

// SystemClock is the wall time read once at start plus Go's monotonic clock
// since then, so stepping the wall clock back (NTP, an operator) cannot make
// it run backwards. Resync moves it forward to the wall clock when the wall
// clock is ahead; it never moves it back.
type SystemClock struct {
	offset atomic.Int64 // wall nanos at mono0, raised by Resync
	mono0  time.Time
}

// NewSystemClock starts a SystemClock at the current wall time.
func NewSystemClock() *SystemClock {
	now := time.Now()
	c := &SystemClock{mono0: now}
	c.offset.Store(now.UnixNano())
	return c
}

// NowNanos implements Clock.
func (c *SystemClock) NowNanos() int64 { return c.offset.Load() + int64(time.Since(c.mono0)) }

// WaitUntil sleeps on a Go timer until fineWindow before t, then with
// finePause: idle, and a little late rather than early. (One waiter per
// unit waits here: see unitGate.) The precise sleeps are short and not
// interruptible, so ctx is looked at between them.
func (c *SystemClock) WaitUntil(ctx context.Context, t int64) error {
	for {
		d := time.Duration(t - c.NowNanos())
		if d <= 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d > fineWindow {
			if err := ctxtime.Sleep(ctx, d-fineWindow); err != nil {
				return err
			}
			continue
		}
		finePause(d)
	}
}

// Resync compares the clock with the wall clock. When the wall clock is
// ahead, the clock jumps forward to it; when it is behind, the clock keeps
// running and Resync reports by how much the wall clock is behind.
func (c *SystemClock) Resync() (wallBehind time.Duration) {
	wall := time.Now().UnixNano()
	ours := c.NowNanos()
	if wall > ours {
		c.offset.Add(wall - ours)
		return 0
	}
	return time.Duration(ours - wall)
}
