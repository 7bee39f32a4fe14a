package service

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// unitsOf returns the populate rule of layout t, without borrowing.
func unitsOf(t intf.IdType) *units {
	l, _ := t.Layout()
	return &units{unitNanos: int64(l.Unit), maxSeq: l.Seq.Max(), catchUp: int64(catchUpWindow / l.Unit)}
}

// A used-up unit whose successors the clock passed while the waiter
// slept: the units in between are each filled in turn, within the catch-up
// window behind the clock, and never one below a unit handed out.
func TestStepCatchesUpUnitsAWaiterSlept(t *testing.T) {
	u := unitsOf(intf.MinGranularity)
	require.EqualValues(t, 5, u.catchUp)
	full := state{last: 100, seq: u.maxSeq}

	// The clock is 3 units on: 101 is caught up, not skipped.
	next, first, got := u.step(full, 103, 1)
	assert.Equal(t, state{last: 101, seq: 0, behind: true}, next)
	assert.EqualValues(t, 0, first)
	assert.EqualValues(t, 1, got)

	// A caught-up unit is filled before the populator moves on, even as
	// the clock moves.
	next, first, got = u.step(next, 104, 10)
	assert.Equal(t, state{last: 101, seq: 10, behind: true}, next)
	assert.EqualValues(t, 1, first)
	assert.EqualValues(t, 10, got)

	// Used up: the next one is caught up in turn.
	next, _, _ = u.step(state{last: 101, seq: u.maxSeq, behind: true}, 104, 1)
	assert.Equal(t, state{last: 102, seq: 0, behind: true}, next)

	// Caught up to the unit before the clock's: the next one is the
	// clock's, still a unit of the saturated run.
	next, _, _ = u.step(state{last: 103, seq: u.maxSeq, behind: true}, 104, 1)
	assert.Equal(t, state{last: 104, seq: 0, behind: true}, next)

	// A caller held up in the middle of a unit of a saturated run finds it
	// again within the window, and it is filled before the clock's.
	next, first, got = u.step(state{last: 104, seq: 9, behind: true}, 107, 5)
	assert.Equal(t, state{last: 104, seq: 14, behind: true}, next)
	assert.EqualValues(t, 10, first)
	assert.EqualValues(t, 5, got)

	// A caught-up unit that fell out of the window is left for the clock's.
	next, _, _ = u.step(state{last: 101, seq: 7, behind: true}, 107, 1)
	assert.Equal(t, state{last: 107, seq: 0}, next)

	// Beyond the window behind the clock: the clock's unit, as Vesta.
	next, _, _ = u.step(full, 107, 1)
	assert.Equal(t, state{last: 107, seq: 0}, next)

	// A unit not used up is never caught up after: the load did not
	// saturate it, and the next ID takes the clock's unit.
	next, _, _ = u.step(state{last: 100, seq: 5}, 103, 1)
	assert.Equal(t, state{last: 103, seq: 0}, next)

	// The clock one unit on: the next unit, as always, marked as a unit
	// of a saturated run (its predecessor was used up).
	next, _, _ = u.step(full, 101, 1)
	assert.Equal(t, state{last: 101, seq: 0, behind: true}, next)

	// A unit taken after one not used up is not part of a saturated run:
	// a caller coming back to it later takes the clock's unit.
	next, _, _ = u.step(state{last: 100, seq: 5}, 101, 1)
	assert.Equal(t, state{last: 101, seq: 0}, next)
	next, _, _ = u.step(next, 103, 1)
	assert.Equal(t, state{last: 103, seq: 0}, next)
}

// A max-peak unit (one second) is longer than the window: it never
// catches up.
func TestStepMaxPeakNeverCatchesUp(t *testing.T) {
	u := unitsOf(intf.MaxPeak)
	require.EqualValues(t, 0, u.catchUp)
	next, _, _ := u.step(state{last: 100, seq: u.maxSeq}, 102, 1)
	assert.Equal(t, state{last: 102, seq: 0}, next)
	assert.Less(t, catchUpWindow, time.Second)
}

// The packed populator's word keeps every field, behind included, at the
// widest time field.
func TestPackKeepsEveryField(t *testing.T) {
	l, _ := intf.MinGranularity.Layout()
	for _, st := range []state{
		{last: -1, seq: -1}, {last: 0, seq: 0}, {last: l.Time.Max(), seq: 1<<20 - 1, behind: true},
		{last: 12345, seq: -1, behind: true}, {last: l.Time.Max() + 1, seq: 1023},
	} {
		assert.Equal(t, st, unpack(pack(st)), "%+v", st)
	}
}
