package sysclock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/internal/sysclock"
)

var bg = context.Background()

func TestNearWallClock(t *testing.T) {
	c := sysclock.New()
	d := time.Duration(c.NowNanos() - time.Now().UnixNano())
	assert.Less(t, d.Abs(), time.Second)
}

// TestNeverDecreases reads the clock from several goroutines,
// each also checking against the largest value any goroutine published
// before its read: the clock must never be seen going back, within a
// goroutine or across goroutines.
func TestNeverDecreases(t *testing.T) {
	c := sysclock.New()
	var published atomic.Int64
	const g, n = 4, 50_000
	var wg sync.WaitGroup
	var bad atomic.Int64
	stop := make(chan struct{})
	// Resync runs meanwhile: it may move the clock forward, never back.
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				c.Resync()
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	for range g {
		wg.Go(func() {
			prev := int64(0)
			for range n {
				seen := published.Load()
				now := c.NowNanos()
				if now < prev || now < seen {
					bad.Add(1)
				}
				prev = now
				for {
					p := published.Load()
					if p >= now || published.CompareAndSwap(p, now) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	assert.Zero(t, bad.Load(), "reads that went back")
}

func TestWaitUntil(t *testing.T) {
	c := sysclock.New()
	// Short waits are spun, longer ones mostly slept: try both.
	for _, d := range []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 30 * time.Millisecond} {
		target := c.NowNanos() + int64(d)
		start := time.Now()
		require.NoError(t, c.WaitUntil(bg, target))
		assert.GreaterOrEqual(t, c.NowNanos(), target, "returned at or after the target (%v)", d)
		assert.GreaterOrEqual(t, time.Since(start), d-time.Millisecond, "did not return early (%v)", d)
		assert.Less(t, time.Since(start), d+2*time.Second, "did not oversleep badly (%v)", d)
	}
	// A target in the past returns at once.
	require.NoError(t, c.WaitUntil(bg, c.NowNanos()-int64(time.Hour)))
}

func TestWaitUntilCancel(t *testing.T) {
	c := sysclock.New()
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	err := c.WaitUntil(ctx, c.NowNanos()+int64(time.Hour))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second)

	ctx, cancel2 := context.WithTimeout(bg, 10*time.Millisecond)
	defer cancel2()
	err = c.WaitUntil(ctx, c.NowNanos()+int64(time.Hour))
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Cancelled in the spin window (the last 2 ms of a wait).
	ctx, cancel3 := context.WithCancel(bg)
	cancel3()
	err = c.WaitUntil(ctx, c.NowNanos()+int64(time.Millisecond))
	assert.ErrorIs(t, err, context.Canceled)
	// Already cancelled, long wait.
	err = c.WaitUntil(ctx, c.NowNanos()+int64(time.Minute))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestResyncNeverMovesBack(t *testing.T) {
	c := sysclock.New()
	for range 1000 {
		before := c.NowNanos()
		behind := c.Resync()
		after := c.NowNanos()
		require.GreaterOrEqual(t, after, before)
		require.GreaterOrEqual(t, behind, time.Duration(0))
		// The wall clock is not meaningfully behind a fresh clock.
		require.Less(t, behind, time.Second)
	}
}
