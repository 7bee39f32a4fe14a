package statuspage

import (
	"sync/atomic"
	"time"
)

// sample is the issued counter at one time.
type sample struct {
	at     time.Time
	issued uint64
}

// window is the two latest samples, at least a second apart.
type window struct{ older, newer sample }

// rate turns the issued counter into IDs per second without a goroutine
// of its own: each /status read takes a sample when the newest is a
// second old, and the rate is measured from the sample before it. So one
// browser tab polling every second sees the rate of the last 1-2 s, and
// any number of tabs cost the same: one swap of a pointer per second.
type rate struct{ w atomic.Pointer[window] }

// observe records issued at now when due and returns the rate since the
// older sample and the span it covers (0, 0 until there are two).
func (r *rate) observe(now time.Time, issued uint64) (float64, time.Duration) {
	cur := r.w.Load()
	if cur == nil || now.Sub(cur.newer.at) >= time.Second {
		next := &window{newer: sample{now, issued}}
		if cur != nil {
			next.older = cur.newer
		}
		if r.w.CompareAndSwap(cur, next) {
			cur = next
		} else {
			cur = r.w.Load() // another request took the sample
		}
	}
	base := cur.older
	span := now.Sub(base.at)
	if base.at.IsZero() || span <= 0 || issued < base.issued {
		return 0, 0
	}
	return float64(issued-base.issued) / span.Seconds(), span
}
