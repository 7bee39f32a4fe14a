package segtest

import (
	"context"
	"sync"
	"time"

	"github.com/vesta-go/vesta/service"
)

// Clock is a service.Clock for the segment tests: its time moves only
// when a test moves it (Advance, Tick), and WaitUntil blocks until then,
// so a Generator's refresh loop and a period tag's wait for the end of
// its period wake exactly when the test says. It is safe for concurrent
// use.
type Clock struct {
	mu      sync.Mutex
	now     int64     // Unix nanoseconds
	waits   []*wait   // the callers blocked in WaitUntil
	changed chan bool // closed and replaced whenever waits grows
}

// wait is one caller blocked in WaitUntil until the time reaches t.
type wait struct {
	t    int64
	wake chan struct{} // closed when the time reaches t
}

var _ service.Clock = (*Clock)(nil)

// NewClock starts a Clock at a fixed time.
func NewClock() *Clock {
	return &Clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), changed: make(chan bool)}
}

// NowNanos implements service.Clock.
func (c *Clock) NowNanos() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Now is the clock's time in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.NowNanos()).UTC() }

// WaitUntil implements service.Clock: it returns once Advance or Tick has
// moved the time to t, or with ctx's error.
func (c *Clock) WaitUntil(ctx context.Context, t int64) error {
	c.mu.Lock()
	if c.now >= t {
		c.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return err
	}
	w := &wait{t: t, wake: make(chan struct{})}
	c.waits = append(c.waits, w)
	close(c.changed)
	c.changed = make(chan bool)
	c.mu.Unlock()
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, o := range c.waits {
			if o == w {
				c.waits = append(c.waits[:i], c.waits[i+1:]...)
				return ctx.Err()
			}
		}
		return nil // woken meanwhile
	}
}

// Advance moves the clock forward by d and wakes the callers waiting for
// a time it reached.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveTo(c.now + int64(d))
}

// moveTo sets the time to t and wakes the waits that end by then. Call
// it with c.mu held.
func (c *Clock) moveTo(t int64) {
	c.now = t
	left := c.waits[:0]
	for _, w := range c.waits {
		if w.t <= t {
			close(w.wake)
		} else {
			left = append(left, w)
		}
	}
	clear(c.waits[len(left):])
	c.waits = left
}

// Waiting counts the callers blocked in WaitUntil for a time at or
// before limit.
func (c *Clock) Waiting(limit time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.waits {
		if w.t <= limit.UnixNano() {
			n++
		}
	}
	return n
}

// NextWait blocks until a caller waits in WaitUntil for a time at or
// before limit, and returns the earliest such time.
func (c *Clock) NextWait(limit time.Time) time.Time {
	for {
		c.mu.Lock()
		first, found := int64(0), false
		for _, w := range c.waits {
			if w.t <= limit.UnixNano() && (!found || w.t < first) {
				first, found = w.t, true
			}
		}
		changed := c.changed
		c.mu.Unlock()
		if found {
			return time.Unix(0, first).UTC()
		}
		<-changed
	}
}

// Tick blocks until a caller waits in WaitUntil (a Generator's refresh
// loop between two rereads of the tag list), then moves the time to the
// earliest time waited for, which wakes that caller. Ticking twice
// therefore returns only after the work of the first tick is done: the
// refresh loop waits again only after its reread.
func (c *Clock) Tick() {
	t := c.NextWait(time.Unix(0, 1<<63-1)).UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveTo(max(c.now, t))
}
