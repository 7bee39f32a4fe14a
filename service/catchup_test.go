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
			ids := make([][]int64, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for range perG {
						id, err := svc.GenId(bg)
						if err != nil {
							t.Error(err)
							return
						}
						if at := intf.Int64Id(id).Time(intf.DefaultEpochMillis); at.After(clk.Now()) {
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
