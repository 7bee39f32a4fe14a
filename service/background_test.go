package service_test

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// These tests wait for the background goroutine, which stores the mark
// about once a second of real time; they run in parallel with the rest.

// eventually polls f every 10 ms for up to d.
func eventually(d time.Duration, f func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return f()
}

// TestIssuingStopsAtTheStoredMark: the hot path never issues above the
// mark stored in the data dir. When the clock runs past it (here a fake
// clock jumps 5 s; the mark leads by 3 s), GenId fails with ErrNotPersisted
// until the background stores a new mark; when storing fails, it keeps
// failing and the failure is logged.
func TestIssuingStopsAtTheStoredMark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := newFakeClock(testStart)
	logs := &logBuffer{}
	svc := startDir(t, dir, clk, service.Settings{Logger: logs.logger()})
	defer svc.Close()
	_, err := svc.GenId(bg)
	require.NoError(t, err)

	// Jump past the mark until a GenId sees it (the background may store
	// a new mark between the jump and the call: then jump again).
	refused := false
	for range 5 {
		clk.Advance(5 * time.Second)
		_, err = svc.GenId(bg)
		if err != nil {
			refused = true
			break
		}
	}
	require.True(t, refused, "GenId issued past the stored mark")
	assert.ErrorIs(t, err, intf.ErrNotPersisted)
	assert.Contains(t, err.Error(), dir)
	_, err = svc.GenIds(bg, 10)
	assert.ErrorIs(t, err, intf.ErrNotPersisted)

	// The background stores a mark ahead of the clock again: issuing resumes.
	before := svc.Stats().HighWaterMillis
	require.True(t, eventually(5*time.Second, func() bool { _, err := svc.GenId(bg); return err == nil }),
		"issuing resumed after the background stored a new mark")
	assert.Greater(t, svc.Stats().HighWaterMillis, before)
	assert.Greater(t, readMark(t, dir), clk.Now().UnixMilli(), "the stored mark is ahead of the clock")

	// The mark can no longer be stored: issuing stops once the clock
	// passes the last mark, and the failure is logged.
	require.NoError(t, os.RemoveAll(dir))
	clk.Advance(5 * time.Second)
	require.True(t, eventually(5*time.Second, func() bool {
		return strings.Contains(logs.String(), "cannot store the time high-water mark")
	}), "the failure to store the mark is logged")
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrNotPersisted)
}

// resyncClock is a fake clock whose Resync reports the wall clock behind by
// a set amount, as SystemClock does after the wall clock steps back.
type resyncClock struct {
	*fakeClock
	behind  atomic.Int64 // a time.Duration
	resyncs atomic.Int64 // Resync calls: one per background round
}

func newResyncClock(behind time.Duration) *resyncClock {
	c := &resyncClock{fakeClock: newFakeClock(testStart)}
	c.behind.Store(int64(behind))
	return c
}

func (c *resyncClock) Resync() time.Duration {
	c.resyncs.Add(1)
	return time.Duration(c.behind.Load())
}

// TestClockBackEventsCounted runs in a synctest bubble: the background's
// ticker fires on the bubble's fake time, so the test sees exactly how many
// rounds ran instead of sleeping and hoping one did.
func TestClockBackEventsCounted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The bubble's time starts in 2000, before the default epoch that
		// the settings check against the wall clock: move it to testStart.
		time.Sleep(time.Until(testStart))
		clk := newResyncClock(2 * time.Second)
		logs := &logBuffer{}
		svc := newSvc(t, service.Settings{Clock: clk, Logger: logs.logger()})
		time.Sleep(time.Second) // one background round
		synctest.Wait()
		require.Equal(t, int64(1), clk.resyncs.Load(), "one background round")
		assert.Equal(t, uint64(1), svc.Stats().ClockBackEvents, "a wall clock 2 s behind is counted")
		assert.Contains(t, logs.String(), "wall clock moved back")
		// IDs are not affected.
		ids, err := svc.GenIds(bg, 100)
		require.NoError(t, err)
		assertStrictlyIncreasing(t, layoutOf(t, intf.MaxPeak), ids)
		// The same lag seen again, round after round, is the same event.
		time.Sleep(3 * time.Second)
		synctest.Wait()
		require.Equal(t, int64(4), clk.resyncs.Load(), "three more rounds")
		assert.Equal(t, uint64(1), svc.Stats().ClockBackEvents)
		assert.Equal(t, 1, strings.Count(logs.String(), "wall clock moved back"), "logged once")
		// A lag that ends and comes back is a new event.
		clk.behind.Store(0)
		time.Sleep(time.Second)
		synctest.Wait()
		clk.behind.Store(int64(2 * time.Second))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, int64(6), clk.resyncs.Load())
		assert.Equal(t, uint64(2), svc.Stats().ClockBackEvents)
	})
}
