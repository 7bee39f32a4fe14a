package segtest

import (
	"context"
	"sync"
	"time"

	"github.com/vesta-go/vesta/service/segment"
)

// Clock is a segment.Clock that moves only when told. Its tickers deliver
// a tick only when Tick is called.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []chan time.Time
}

// NewClock starts a Clock at a fixed time.
func NewClock() *Clock {
	return &Clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Now implements segment.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// NewTicker implements segment.Clock; the interval is ignored.
func (c *Clock) NewTicker(time.Duration) segment.Ticker {
	ch := make(chan time.Time) // unbuffered: Tick returns once a tick is taken
	c.mu.Lock()
	c.tickers = append(c.tickers, ch)
	c.mu.Unlock()
	return ticker{ch}
}

// Tick delivers one tick to every ticker and returns once each has taken
// it. Ticking twice therefore returns only after the work of the first
// tick is done (the receiver takes the second tick after that work).
func (c *Clock) Tick() {
	c.mu.Lock()
	ts := append([]chan time.Time(nil), c.tickers...)
	now := c.now
	c.mu.Unlock()
	for _, ch := range ts {
		ch <- now
	}
}

type ticker struct{ ch chan time.Time }

func (t ticker) C() <-chan time.Time { return t.ch }
func (t ticker) Stop()               {}

// Sleep implements segment.Sleeper: it advances the clock by d at once.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}
