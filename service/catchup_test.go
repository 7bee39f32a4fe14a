package service_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// lateClock is a fakeClock whose waits wake late by a fixed amount, as a
// descheduled thread does.
type lateClock struct {
	fakeClock
	late time.Duration
}

func (c *lateClock) WaitUntil(ctx context.Context, t int64) error {
	return c.fakeClock.WaitUntil(ctx, t+int64(c.late))
}

// Every populator, saturated by many goroutines while each wait for the
// next unit wakes three units late: every unit is filled in turn, none
// skipped, none repeated, each goroutine's IDs increase, and no ID's time
// is ahead of the clock. Run under -race.
func TestSaturatedMinGranularityCatchesUpLateWakes(t *testing.T) {
	l := layoutOf(t, intf.MinGranularity)
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			clk := &lateClock{fakeClock: *newFakeClock(testStart), late: 3 * l.Unit}
			svc := newSvc(t, service.Settings{Type: intf.MinGranularity, Populator: pop, Clock: clk})
			const goroutines, perG = 8, 3000
			ids := make([][]intf.Id, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for range perG {
						id, err := svc.GenId(bg)
						if err != nil {
							t.Error(err)
							return
						}
						if at := intf.Id(id).Time(intf.DefaultEpochMillis); at.After(clk.Now()) {
							t.Errorf("ID of %v issued at %v: ahead of the clock", at, clk.Now())
							return
						}
						ids[g] = append(ids[g], id)
					}
				})
			}
			wg.Wait()
			total, err := checkUnique(l, ids)
			require.NoError(t, err)
			require.Equal(t, goroutines*perG, total)
			perUnit := map[int64]int64{}
			first, last := int64(1<<62), int64(0)
			for _, g := range ids {
				assertStrictlyIncreasing(t, l, g)
				for _, id := range g {
					unit, _ := unitSeq(l, id)
					perUnit[unit]++
					first, last = min(first, unit), max(last, unit)
				}
			}
			require.Greater(t, last-first, int64(10), "the test did not wait for new units")
			for unit := first; unit < last; unit++ {
				assert.Equal(t, l.Seq.Max()+1, perUnit[unit], "unit %d (first %d, last %d)", unit, first, last)
			}
		})
	}
}

// A caller of a saturated run held up in the middle of a unit (three units
// pass before its next call: descheduled, or a collection paused it) finds
// that unit again and fills it, then the units it missed, each in full
// and none ahead of the clock; a caller that did not saturate its unit
// takes the clock's unit after the same pause. Every populator, -race.
func TestSaturatedRunKeepsAUnitItsCallerLeftHalfUsed(t *testing.T) {
	l := layoutOf(t, intf.MinGranularity)
	per := l.Seq.Max() + 1
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			clk := newFakeClock(testStart)
			svc := newSvc(t, service.Settings{Type: intf.MinGranularity, Populator: pop, Clock: clk})
			take := func(n int64) []intf.Id {
				ids := make([]intf.Id, 0, n)
				for range n {
					id, err := svc.GenId(bg)
					require.NoError(t, err)
					at := intf.Id(id).Time(intf.DefaultEpochMillis)
					require.False(t, at.After(clk.Now()), "ID of %v issued at %v: ahead of the clock", at, clk.Now())
					ids = append(ids, id)
				}
				return ids
			}
			ids := take(per + 100) // a unit used up, and 100 IDs of the next (waiting moves the fake clock)
			held, seq := unitSeq(l, ids[len(ids)-1])
			require.EqualValues(t, 99, seq)
			clk.Advance(3 * l.Unit)
			more := take(3 * per)
			unit, seq := unitSeq(l, more[0])
			assert.Equal(t, held, unit, "the unit left half used is taken up again")
			assert.EqualValues(t, 100, seq)
			all := append(ids, more...)
			assertStrictlyIncreasing(t, l, all)
			perUnit := map[int64]int64{}
			for _, id := range all {
				u, _ := unitSeq(l, id)
				perUnit[u]++
			}
			for u := held - 1; u <= held+2; u++ {
				assert.Equal(t, per, perUnit[u], "unit %d (held up in %d)", u, held)
			}

			// Not saturated: 100 IDs of a unit, the same pause, and the
			// next ID carries the clock's unit.
			lightClk := newFakeClock(testStart)
			light := newSvc(t, service.Settings{Type: intf.MinGranularity, Populator: pop, Clock: lightClk})
			var last intf.Id
			for range 100 {
				id, err := light.GenId(bg)
				require.NoError(t, err)
				last = id
			}
			lightClk.Advance(3 * l.Unit)
			id, err := light.GenId(bg)
			require.NoError(t, err)
			before, _ := unitSeq(l, last)
			after, seq := unitSeq(l, id)
			assert.Equal(t, before+3, after, "the clock's unit")
			assert.Zero(t, seq)
		})
	}
}
