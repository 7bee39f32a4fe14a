package service

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A caller that finds its unit used up while the previous unit's sleeper
// is still serving its queue is not queued: it waits for that gate, then
// again for its own unit. That is one exhaustion wait, not two: with one
// caller, ExhaustionWaits equals the units it used up (the race CI once
// hit in TestPopulators/lock/ExhaustionFakeClock, made certain here).
func TestExhaustionWaitCountsACallerOncePerUnit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		close(release) // the clock jumps to each target at once
		clk := &heldClock{waiting: make(chan struct{}, 4), release: release}
		clk.now.Store(100) // in unit 1 (units of 100 ns)
		u := &units{clock: clk, unitNanos: 100, maxSeq: 0}
		p := newLocked(u, new(sync.Mutex), state{last: 1, seq: 0}) // unit 1 used up

		// The gate of unit 1, its sleeper serving the queue.
		serving := make(chan struct{})
		u.gate.target, u.gate.open, u.gate.handing = 100, serving, true

		type result struct {
			unit, got int64
			err       error
		}
		done := make(chan result, 1)
		go func() {
			unit, _, got, err := p.reserve(context.Background(), 1)
			done <- result{unit, got, err}
		}()
		synctest.Wait()
		require.Empty(t, done, "the caller waits for the gate being served")
		assert.Empty(t, u.gate.queue, "it is not queued while the queue is served")
		assert.EqualValues(t, 1, u.waits.Load())

		close(serving) // the old sleeper is done; the caller tries again
		r := <-done
		require.NoError(t, r.err)
		assert.Equal(t, result{unit: 2, got: 1}, r, "served in the next unit")
		assert.Len(t, clk.waiting, 1, "one sleeper moved the clock")
		assert.EqualValues(t, 1, u.waits.Load(), "one caller, one used-up unit: one wait")
	})
}
