package service_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// With MaxBorrow a burst runs ahead of the clock instead of waiting: here 8
// min-granularity units' worth of IDs while the clock stands still, every
// one unique and increasing, none more than MaxBorrow ahead, every
// populator. (BenchmarkBorrowBurst does it with max-peak seconds.)
func TestBorrowRunsAheadWithoutWaiting(t *testing.T) {
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			l := layoutOf(t, intf.MinGranularity)
			clk := newFakeClock(testStart)
			svc := startDir(t, t.TempDir(), clk, service.Settings{Populator: pop, Type: intf.MinGranularity, MaxBorrow: 30 * time.Millisecond})
			defer svc.Close()
			perUnit := int(l.Seq.Max() + 1)
			var all []intf.Id
			for len(all) < 8*perUnit {
				ids, err := svc.GenIds(bg, 1000)
				require.NoError(t, err)
				all = append(all, ids...)
			}
			assert.Zero(t, clk.waits.Load(), "no wait for the clock")
			assertStrictlyIncreasing(t, l, all)
			nowUnit := clk.Now().UnixMilli() - intf.DefaultEpochMillis
			assert.GreaterOrEqual(t, maxUnit(l, all), nowUnit+7, "ran ahead of the clock")
			assert.LessOrEqual(t, maxUnit(l, all), nowUnit+30, "at most MaxBorrow ahead")
			ahead := svc.Stats().AheadMillis
			assert.GreaterOrEqual(t, ahead, int64(6), "Stats tells how far ahead it runs")
			assert.LessOrEqual(t, ahead, int64(30))
		})
	}
}

// Borrowing stops at MaxBorrow: past it, callers wait for the clock.
func TestBorrowIsBounded(t *testing.T) {
	l := layoutOf(t, intf.MinGranularity)
	clk := newFakeClock(testStart)
	svc := startDir(t, t.TempDir(), clk, service.Settings{Type: intf.MinGranularity, MaxBorrow: 5 * time.Millisecond})
	defer svc.Close()
	ids, err := svc.GenIds(bg, 6*int(l.Seq.Max()+1)) // this unit and 5 borrowed
	require.NoError(t, err)
	assert.Zero(t, clk.waits.Load())
	_, err = svc.GenId(bg) // the 7th unit is beyond the bound: wait
	require.NoError(t, err)
	assert.Equal(t, int64(1), clk.waits.Load())
	assertStrictlyIncreasing(t, l, ids)
}

// The marks are stored ahead of every borrowed unit: a crash in the middle
// of a burst (the mark stored ahead is what a crash leaves) and an
// immediate restart repeat no ID, and the restart serves without a stall.
func TestBorrowedIdsSurviveACrash(t *testing.T) {
	t.Parallel() // own data dir and fake clock; among the slowest here
	l := layoutOf(t, intf.MinGranularity)
	dir := t.TempDir()
	clk := newFakeClock(testStart)
	s := service.Settings{Type: intf.MinGranularity, MaxBorrow: 10 * time.Second}
	svc := startDir(t, dir, clk, s)
	var first []intf.Id
	for len(first) < 500*int(l.Seq.Max()+1) { // half a second of units, borrowed
		ids, err := svc.GenIds(bg, intf.MaxBatch)
		require.NoError(t, err)
		first = append(first, ids...)
	}
	ahead, err := os.ReadFile(filepath.Join(dir, "highwater"))
	require.NoError(t, err)
	aheadMs := readMark(t, dir)
	assert.GreaterOrEqual(t, aheadMs, unitStartMs(l, maxUnit(l, first)), "the stored mark covers the furthest borrowed unit")
	require.NoError(t, svc.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "highwater"), ahead, 0o600)) // as a crash leaves it

	waits := clk.waits.Load()
	svc = startDir(t, dir, clk, s)
	defer svc.Close()
	second := genN(t, svc, 100)
	assert.Equal(t, waits, clk.waits.Load(), "no stall")
	_, err = checkUnique(l, [][]intf.Id{first, second})
	require.NoError(t, err)
	assert.Greater(t, minUnit(l, second), maxUnit(l, first))
}

func TestMaxBorrowIsValidated(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, 2 * time.Hour} {
		_, err := service.New(bg, service.Settings{MaxBorrow: d, NoDataDir: true, Clock: newFakeClock(testStart), Logger: discardLog})
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "maxBorrow", fe.Field)
	}
}
