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

// These tests run in synctest bubbles: the background goroutine's ticker
// (one round per markInterval, a second) fires on the bubble's fake time,
// so a test sleeps exactly as many rounds as it means and synctest.Wait
// lets each round finish (writing the mark is real file I/O) before it
// looks. No round can run between two steps of a test unless it sleeps.

// enterBubbleAt moves the time of a synctest bubble, which starts in 2000
// (before the default epoch that the settings check against the wall
// clock), to t.
func enterBubbleAt(t time.Time) { time.Sleep(time.Until(t)) }

// TestIssuingStopsAtTheStoredMark: the hot path never issues above the
// mark stored in the data dir. When the clock runs past it (here a fake
// clock jumps 5 s; the mark leads by 3 s), GenId fails with ErrNotPersisted
// until the background stores a new mark, at its next round; when storing
// fails, it keeps failing and the failure is logged.
func TestIssuingStopsAtTheStoredMark(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		enterBubbleAt(testStart)
		dir := t.TempDir()
		clk := newFakeClock(testStart)
		logs := &logBuffer{}
		svc := startDir(t, dir, clk, service.Settings{Logger: logs.logger()})
		defer svc.Close()
		_, err := svc.GenId(bg)
		require.NoError(t, err)

		// Jump past the mark: no background round runs before the call.
		clk.Advance(5 * time.Second)
		_, err = svc.GenId(bg)
		require.Error(t, err, "GenId issued past the stored mark")
		assert.ErrorIs(t, err, intf.ErrNotPersisted)
		assert.Contains(t, err.Error(), dir)
		_, err = svc.GenIds(bg, 10)
		assert.ErrorIs(t, err, intf.ErrNotPersisted)

		// The next round stores a mark ahead of the clock again: issuing resumes.
		before := svc.Stats().HighWaterMillis
		time.Sleep(time.Second)
		synctest.Wait()
		_, err = svc.GenId(bg)
		require.NoError(t, err, "issuing resumed after the background stored a new mark")
		assert.Greater(t, svc.Stats().HighWaterMillis, before)
		assert.Greater(t, readMark(t, dir), clk.Now().UnixMilli(), "the stored mark is ahead of the clock")

		// The mark can no longer be stored: issuing stops once the clock
		// passes the last mark, and the failure is logged at the next round.
		require.NoError(t, os.RemoveAll(dir))
		clk.Advance(5 * time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Contains(t, logs.String(), "cannot store the time high-water mark", "the failure to store the mark is logged")
		_, err = svc.GenId(bg)
		assert.ErrorIs(t, err, intf.ErrNotPersisted)
	})
}

// resyncClock is a fake clock whose Resync reports the wall clock behind by
// a set amount, as the system clock does after the wall clock steps back.
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
		enterBubbleAt(testStart)
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
