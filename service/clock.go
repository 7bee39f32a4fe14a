package service

import "context"

// Clock is the time source of a Service and of a segment.Generator.
// NowNanos must never decrease. The default, when Settings.Clock is nil,
// is the system clock: the wall time read at start plus Go's monotonic
// clock since then (a Service also moves it forward to the wall clock
// when that is ahead, never back).
type Clock interface {
	// NowNanos returns nanoseconds since the Unix epoch.
	NowNanos() int64
	// WaitUntil blocks until NowNanos() >= t, or returns ctx's error.
	WaitUntil(ctx context.Context, t int64) error
}
