package service_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test clocks of the service's tests (fakeclock_test.go).

func TestFakeClock(t *testing.T) {
	c := newFakeClock(testStart)
	assert.Equal(t, testStart.UnixNano(), c.NowNanos())
	assert.Equal(t, testStart.UnixNano(), c.NowNanos(), "time stands still")
	require.NoError(t, c.WaitUntil(bg, testStart.Add(time.Second).UnixNano()))
	assert.Equal(t, testStart.Add(time.Second), c.Now(), "WaitUntil jumps forward")
	require.NoError(t, c.WaitUntil(bg, testStart.UnixNano()))
	assert.Equal(t, testStart.Add(time.Second), c.Now(), "and never back")
	assert.Equal(t, int64(1), c.waits.Load())
	ctx, cancel := context.WithCancel(bg)
	cancel()
	assert.ErrorIs(t, c.WaitUntil(ctx, testStart.Add(time.Hour).UnixNano()), context.Canceled)
	assert.Equal(t, testStart.Add(time.Second), c.Now())
	c.Advance(-2 * time.Second)
	assert.Equal(t, testStart.Add(-time.Second), c.Now())
	c.Set(testStart)
	assert.Equal(t, testStart, c.Now())

	// Concurrent waiters all end at or after their targets.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			target := testStart.Add(time.Duration(i) * time.Millisecond).UnixNano()
			assert.NoError(t, c.WaitUntil(bg, target))
			assert.GreaterOrEqual(t, c.NowNanos(), target)
		})
	}
	wg.Wait()
	assert.Equal(t, testStart.Add(15*time.Millisecond), c.Now())
}

func TestSteppingClockGoesBack(t *testing.T) {
	c := newSteppingClock(testStart, time.Millisecond, 3, 5*time.Millisecond)
	a, b, back := c.NowNanos(), c.NowNanos(), c.NowNanos()
	assert.Equal(t, int64(time.Millisecond), b-a)
	assert.Less(t, back, b, "every third read goes back")
	require.NoError(t, c.WaitUntil(bg, testStart.Add(time.Second).UnixNano()))
	assert.GreaterOrEqual(t, c.NowNanos(), testStart.Add(time.Second).UnixNano())
}

func TestCountingClock(t *testing.T) {
	c := newCountingClock(testStart, time.Millisecond, 4)
	var got []int64
	for range 9 {
		got = append(got, (c.NowNanos()-testStart.UnixNano())/int64(time.Millisecond))
	}
	assert.Equal(t, []int64{0, 0, 0, 1, 1, 1, 1, 2, 2}, got)
	target := testStart.Add(10 * time.Millisecond).UnixNano()
	require.NoError(t, c.WaitUntil(bg, target))
	assert.GreaterOrEqual(t, c.NowNanos(), target)
}
