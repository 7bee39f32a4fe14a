// Package sysclock is the system clock of the generators: the default
// Clock of service.New and of segment.New. It reads the wall time once at
// start and adds Go's monotonic clock since then, so it never runs
// backwards, and it waits precisely (a millisecond unit loses almost
// nothing to a late wake-up).
package sysclock

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// fineWindow is the end of a wait that is not slept on a Go timer: Go's
// timers wake up to a millisecond late on these machines (the netpoller
// waits in whole milliseconds), which would lose most of a millisecond
// unit. It is slept with finePause (nanosleep), waking early by the
// oversleep measured so far, and the last few microseconds are spun.
const fineWindow = 2 * time.Millisecond

// oversleep tracks how late finePause wakes (a moving average, in
// nanoseconds), so that the next one is asked to wake that much earlier.
var oversleep atomic.Int64

func init() { oversleep.Store(int64(20 * time.Microsecond)) }

// spinTail is the part of a wait spun rather than slept: about the
// variation of finePause's oversleep.
const spinTail = 10 * time.Microsecond

// maxOversleep caps the estimate: a thread descheduled once must not make
// every later wait spin long.
const maxOversleep = 200 * time.Microsecond

// Clock is the wall time read once at start plus Go's monotonic clock
// since then, so stepping the wall clock back (NTP, an operator) cannot make
// it run backwards. Resync moves it forward to the wall clock when the wall
// clock is ahead; it never moves it back. It implements service.Clock.
type Clock struct {
	offset atomic.Int64 // wall nanos at mono0, raised by Resync
	mono0  time.Time
}

// New starts a Clock at the current wall time.
func New() *Clock {
	now := time.Now()
	c := &Clock{mono0: now}
	c.offset.Store(now.UnixNano())
	return c
}

// NowNanos returns nanoseconds since the Unix epoch; it never decreases.
func (c *Clock) NowNanos() int64 { return c.offset.Load() + int64(time.Since(c.mono0)) }

// WaitUntil returns once NowNanos() >= t, or with ctx's error. It sleeps
// on a Go timer until fineWindow before t, then with finePause, asked to
// wake early by the oversleep measured so far, and spins only the last
// spinTail: idle, and on time. The precise sleeps are short and not
// interruptible, so ctx is looked at between them.
func (c *Clock) WaitUntil(ctx context.Context, t int64) error {
	for {
		now := c.NowNanos()
		d := time.Duration(t - now)
		if d <= 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		switch early := time.Duration(oversleep.Load()); {
		case d > fineWindow:
			if err := ctxtime.Sleep(ctx, d-fineWindow); err != nil {
				return err
			}
		case d > early+spinTail:
			want := d - early - spinTail
			finePause(want)
			late := time.Duration(c.NowNanos()-now) - want
			oversleep.Store(int64(min(max(early+(late-early)/8, 0), maxOversleep))) // a moving average
		default:
			runtime.Gosched()
		}
	}
}

// Resync compares the clock with the wall clock. When the wall clock is
// ahead, the clock jumps forward to it; when it is behind, the clock keeps
// running and Resync reports by how much the wall clock is behind.
func (c *Clock) Resync() (wallBehind time.Duration) {
	wall := time.Now().UnixNano()
	ours := c.NowNanos()
	if wall > ours {
		c.offset.Add(wall - ours)
		return 0
	}
	return time.Duration(ours - wall)
}
