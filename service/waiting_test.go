package service_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// bubbleClock is the time of a synctest bubble (fake, exact): WaitUntil
// sleeps on a timer of the bubble. Once armed, its next read blocks until
// the test releases it, as a caller descheduled for a long time.
type bubbleClock struct {
	mu      sync.Mutex
	entered chan struct{}
	release chan struct{}
}

func (c *bubbleClock) NowNanos() int64 {
	c.mu.Lock()
	entered, release := c.entered, c.release
	c.entered, c.release = nil, nil
	c.mu.Unlock()
	if entered != nil {
		close(entered)
		<-release
	}
	return time.Now().UnixNano()
}

func (c *bubbleClock) WaitUntil(ctx context.Context, t int64) error {
	d := time.Duration(t - time.Now().UnixNano())
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *bubbleClock) blockNext() (entered, release chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entered, c.release = make(chan struct{}), make(chan struct{})
	return c.entered, c.release
}

// useUp issues every ID of the current unit of a max-peak service.
func useUp(t *testing.T, svc *service.Service) {
	t.Helper()
	l := layoutOf(t, intf.MaxPeak)
	for left := l.Seq.Max() + 1; left > 0; {
		n := min(left, intf.MaxBatch)
		_, err := svc.GenIds(bg, int(n))
		require.NoError(t, err)
		left -= n
	}
}

// A caller that loaded the issuance, then was held up for seconds while the
// background raised the stored mark, gets its ID: the present state allows
// it, so it must not fail with an error that blames the disk. (It failed
// with ErrNotPersisted before.)
func TestAStaleSnapshotIsNotAnError(t *testing.T) {
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				enterBubbleAt(testStart)
				clk := &bubbleClock{}
				svc := startDir(t, t.TempDir(), clk, service.Settings{Populator: pop})
				defer svc.Close()
				_, err := svc.GenId(bg)
				require.NoError(t, err)

				entered, release := clk.blockNext()
				got := make(chan error, 1)
				go func() {
					_, err := svc.GenId(bg) // loads the issuance, then stalls reading the clock
					got <- err
				}()
				<-entered
				time.Sleep(10 * time.Second) // the mark moves on, round after round
				synctest.Wait()
				close(release)
				require.NoError(t, <-got, "the present limit allows the unit")
			})
		})
	}
}

// A caller with a deadline that finds the unit used up while another waits
// for the next one returns its context's error at its deadline, with no ID,
// whatever the populator: no populator's lock is held while waiting.
func TestADeadlineIsKeptBehindAWaiter(t *testing.T) {
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				enterBubbleAt(testStart.Add(time.Millisecond)) // a second that has begun
				svc := newSvc(t, service.Settings{Populator: pop, Clock: &bubbleClock{}})
				useUp(t, svc)
				waiter := make(chan error, 1)
				go func() {
					_, err := svc.GenId(bg) // waits for the next second
					waiter <- err
				}()
				synctest.Wait()

				ctx, cancel := context.WithTimeout(bg, 10*time.Millisecond)
				defer cancel()
				start := time.Now()
				id, err := svc.GenId(ctx)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Zero(t, id)
				assert.Equal(t, 10*time.Millisecond, time.Since(start), "returned at the deadline (bubble time)")

				require.NoError(t, <-waiter, "the waiter gets the next unit")
			})
		})
	}
}

// Every caller waiting for a unit is served when it opens: none waits for
// a later unit while others are served (a max-peak unit holds a million).
func TestWaitersAreServedWhenTheUnitOpens(t *testing.T) {
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				enterBubbleAt(testStart.Add(time.Millisecond))
				svc := newSvc(t, service.Settings{Populator: pop, Clock: &bubbleClock{}})
				useUp(t, svc)
				l := layoutOf(t, intf.MaxPeak)
				const callers = 64
				ids := make(chan intf.Id, callers)
				start := time.Now()
				for range callers {
					go func() {
						id, err := svc.GenId(bg)
						assert.NoError(t, err)
						ids <- id
					}()
				}
				synctest.Wait()
				assert.Empty(t, ids, "all wait for the next unit")
				time.Sleep(time.Second)
				synctest.Wait()
				require.Len(t, ids, callers, "all served when the unit opened")
				assert.Less(t, time.Since(start), 2*time.Second)
				close(ids)
				units := map[int64]bool{}
				for id := range ids {
					u, _ := unitSeq(l, id)
					units[u] = true
				}
				assert.Len(t, units, 1, "all in the unit that opened")
			})
		})
	}
}

// After Close, GenId returns ErrClosed at once, even when the unit is
// used up (it waited for the next unit before).
func TestGenIdAfterCloseReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		enterBubbleAt(testStart.Add(time.Millisecond))
		svc, err := service.New(bg, service.Settings{Clock: &bubbleClock{}, NoDataDir: true, Logger: discardLog})
		require.NoError(t, err)
		useUp(t, svc)
		require.NoError(t, svc.Close())
		start := time.Now()
		_, err = svc.GenId(bg)
		assert.ErrorIs(t, err, intf.ErrClosed)
		assert.Zero(t, time.Since(start))
	})
}

// A restart right after a graceful Close serves at once, with the unit
// after the last one issued, even when maxClockBackwardWait is shorter than
// a unit: the rest of the last unit is not the clock being behind.
func TestRestartWithinTheLastUnitServesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		enterBubbleAt(testStart.Add(6 * time.Millisecond))
		dir := t.TempDir()
		clk := &bubbleClock{}
		svc := startDir(t, dir, clk, service.Settings{})
		first := genN(t, svc, 3)
		require.NoError(t, svc.Close())
		start := time.Now()
		svc = startDir(t, dir, clk, service.Settings{MaxClockBackwardWait: 100 * time.Millisecond})
		defer svc.Close()
		second := genN(t, svc, 3)
		assert.Zero(t, time.Since(start), "no wait")
		l := layoutOf(t, intf.MaxPeak)
		_, err := checkUnique(l, [][]intf.Id{first, second})
		require.NoError(t, err)
		assert.Equal(t, maxUnit(l, first)+1, minUnit(l, second))
	})
}
