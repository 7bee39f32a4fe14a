package segment

import "time"

// Clock is the time source of the dynamic step and the tag refresh. Tests
// inject a fake one.
type Clock interface {
	Now() time.Time
	NewTicker(d time.Duration) Ticker
}

// Ticker delivers ticks on C until Stop.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// SystemClock is the real clock (time.Now carries Go's monotonic reading,
// so wall-clock steps do not distort the step logic).
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// NewTicker implements Clock with a time.Ticker.
func (SystemClock) NewTicker(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }

type systemTicker struct{ t *time.Ticker }

func (t systemTicker) C() <-chan time.Time { return t.t.C }
func (t systemTicker) Stop()               { t.t.Stop() }
