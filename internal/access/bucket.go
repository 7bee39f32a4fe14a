package access

import (
	"math"
	"sync"
	"time"
)

// bucket is a token bucket of IDs: it fills at rate per second up to
// burst. A take of n needs min(n, burst) in it and takes all n, so a
// batch larger than the burst passes once the bucket is full and leaves
// it in debt: every allowed batch can be served, and the rate holds on
// average.
type bucket struct {
	rate, burst float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
	// toldUntil is the end of the last wait a refusal told the caller
	// to keep: a call before it ignored the Retry-After.
	toldUntil time.Time
}

func newBucket(rate float64, burst int64, now time.Time) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// refillLocked adds what the rate earned since last.
func (b *bucket) refillLocked(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = math.Min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
}

// take takes n IDs, or says how long until a take of n would succeed.
// early, when not 0, says the caller was refused before and told to wait
// longer than it did: it is early by that much.
func (b *bucket) take(now time.Time, n int) (ok bool, wait, early time.Duration) {
	need := math.Min(float64(n), b.burst)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	if b.tokens >= need {
		b.tokens -= float64(n)
		return true, 0, 0
	}
	wait, early = b.refuseLocked(now, need)
	return false, wait, early
}

// takeUpTo takes the whole IDs the bucket holds now, at most most (>= 1),
// never into debt; or, when it holds less than one, says how long until
// it does, as take.
func (b *bucket) takeUpTo(now time.Time, most int) (got int, wait, early time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	if b.tokens >= 1 {
		got = int(math.Min(math.Floor(b.tokens), float64(most)))
		b.tokens -= float64(got)
		return got, 0, 0
	}
	wait, early = b.refuseLocked(now, 1)
	return 0, wait, early
}

// refuseLocked is the wait until the bucket holds need, and how early the
// caller is when it was told to wait longer before.
func (b *bucket) refuseLocked(now time.Time, need float64) (wait, early time.Duration) {
	secs := (need - b.tokens) / b.rate
	wait = max(time.Duration(math.Ceil(secs*1e9)), time.Millisecond)
	if now.Before(b.toldUntil) {
		return wait, b.toldUntil.Sub(now)
	}
	b.toldUntil = now.Add(wait)
	return wait, 0
}

// give puts back n IDs taken for a call that issued none.
func (b *bucket) give(n int) {
	b.mu.Lock()
	b.tokens = math.Min(b.burst, b.tokens+float64(n))
	b.mu.Unlock()
}

// full says whether the bucket is full at now: forgetting it changes
// nothing.
func (b *bucket) full(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	return b.tokens >= b.burst
}
