package service_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// Every populator runs the same table of tests.
var populatorTests = []struct {
	name string
	run  func(t *testing.T, pop string)
}{
	{"ConcurrentRealClock", testConcurrentRealClock},
	{"ConcurrentFakeClock", testConcurrentFakeClock},
	{"ExhaustionFakeClock", testExhaustionFakeClock},
	{"ExhaustionBatchesFakeClock", testExhaustionBatchesFakeClock},
	{"CancelWhileExhausted", testCancelWhileExhausted},
	{"SteppingClock", testSteppingClock},
	{"GenIdsCount", testGenIdsCount},
	{"GenIdsLargeBatch", testGenIdsLargeBatch},
	{"GenIdsConcurrentMixed", testGenIdsConcurrentMixed},
	{"Settings", testPopulatorSettings},
}

func TestPopulators(t *testing.T) {
	require.Equal(t, []string{"atomic", "lock", "packed", "sync"}, service.Populators())
	t.Parallel()
	if raceEnabled {
		// Under -race the CPU is the limit (64 goroutines on one service
		// keep about one core busy, the critical section being serial):
		// two populators at a time (-parallel, GOMAXPROCS by default), each
		// running its table in order, so that a real-clock run still
		// outpaces its budget.
		for _, pop := range service.Populators() {
			t.Run(pop, func(t *testing.T) {
				t.Parallel()
				for _, tc := range populatorTests {
					t.Run(tc.name, func(t *testing.T) { tc.run(t, pop) })
				}
			})
		}
		return
	}
	// Without -race most of the time goes to waiting for the real clock's
	// budget (1,024 min-granularity IDs a millisecond per service), not to
	// the CPU, and every service has a budget of its own: every populator
	// and every row of the table run at once, whatever -parallel says
	// (their subtests are started from goroutines).
	var pops sync.WaitGroup
	for _, pop := range service.Populators() {
		pops.Go(func() {
			t.Run(pop, func(t *testing.T) {
				var rows sync.WaitGroup
				for _, tc := range populatorTests {
					rows.Go(func() { t.Run(tc.name, func(t *testing.T) { tc.run(t, pop) }) })
				}
				rows.Wait()
			})
		})
	}
	pops.Wait()
}

func testPopulatorSettings(t *testing.T, pop string) {
	svc := newSvc(t, service.Settings{Populator: pop})
	assert.Equal(t, pop, svc.Settings().Populator)
}

// genConcurrently runs g goroutines that each take n IDs with GenId and
// returns each goroutine's IDs in issue order. It stops at the first error.
func genConcurrently(t *testing.T, svc *service.Service, g, n int) [][]intf.Id {
	t.Helper()
	out := make([][]intf.Id, g)
	errs := make([]error, g)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range g {
		wg.Go(func() {
			ids := make([]intf.Id, 0, n)
			<-start
			for range n {
				id, err := svc.GenId(bg)
				if err != nil {
					errs[i] = err
					break
				}
				ids = append(ids, id)
			}
			out[i] = ids
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	return out
}

// checkConcurrentRun proves the IDs of a concurrent run unique, and each
// goroutine's IDs strictly increasing in (time, seq): so in particular its
// time field never decreases.
func checkConcurrentRun(t *testing.T, l intf.Layout, out [][]intf.Id, want int) {
	t.Helper()
	for _, ids := range out {
		assertStrictlyIncreasing(t, l, ids)
	}
	n, err := checkUnique(l, out)
	require.NoError(t, err)
	assert.Equal(t, want, n)
}

// testConcurrentRealClock is the big uniqueness run: 64 goroutines × 100,000
// GenId calls on the real system clock, so the sequence of a unit runs out
// and the populator waits for the next one for real.
//
// Size and budget (measured): under -race on 2 cores, 64 goroutines get
// 0.45-1.0 M IDs/s out of one service (the atomic populator is the slowest,
// it allocates per ID), so one 6.4M run takes 6.5-14 s, and up to 15 s when
// the machine is shared. No populator × type exceeded 15 s on a quiet
// machine, but both types for all four populators would be 8 runs, 60-90 s:
// over the package's budget of about 60 s. So the full 6.4M run uses the real
// clock for one type only, min-granularity, because it is the type whose
// budget (1,024 IDs per millisecond) 64 goroutines exhaust for real many
// times per run, even under -race (the real max-peak budget of 2^20 per
// second is barely reached under -race). Max-peak gets the same
// 64-goroutine run on a fake clock in testConcurrentFakeClock (sized so that
// its sequence must run out), and a real-clock exhaustion of its own in
// TestExhaustionRealClock. The populators run two at a time (TestPopulators
// is parallel per populator), which brings the package to about 55 s under
// -race. The full size is opt-in, with the build tag stress (scripts/test.sh
// and so CI run it); a plain go test, or -short, runs 64 × 5,000: 320,000
// IDs, 312 min-granularity units' budget, so that it still exhausts units
// for real (no multi-million-ID run in a plain go test ./...).
func testConcurrentRealClock(t *testing.T, pop string) {
	const g = 64
	n := 5_000
	if stresstest.On && !testing.Short() {
		n = 100_000
	}
	typ := intf.MinGranularity
	svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Machine: 77})
	begin := time.Now()
	out := genConcurrently(t, svc, g, n)
	elapsed := time.Since(begin)
	checkConcurrentRun(t, layoutOf(t, typ), out, g*n)
	t.Logf("%s %s: %d IDs in %v (%.0f/s), %d exhaustion waits; checked in %v", pop, typ, g*n, elapsed,
		float64(g*n)/elapsed.Seconds(), svc.Stats().ExhaustionWaits, time.Since(begin)-elapsed)
}

// testConcurrentFakeClock: 64 goroutines on a fake clock that only moves
// when the service waits. For max-peak, 64 × 17,000 IDs are more than one
// unit holds (2^20), so every run must exhaust a unit under contention.
func testConcurrentFakeClock(t *testing.T, pop string) {
	const g = 64
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			n := 17_000 // 64 × 17,000 > 2^20
			if typ == intf.MinGranularity {
				n = 2_000 // 125 units of 1,024
			}
			clk := newFakeClock(testStart)
			svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Clock: clk})
			out := genConcurrently(t, svc, g, n)
			checkConcurrentRun(t, layoutOf(t, typ), out, g*n)
			l := layoutOf(t, typ)
			// g*n IDs fill at least this many units after the first.
			wraps := int64(g*n-1) / (l.Seq.Max() + 1)
			assert.GreaterOrEqual(t, svc.Stats().ExhaustionWaits, uint64(wraps), "the sequence ran out at least %d times", wraps)
			assert.GreaterOrEqual(t, clk.waits.Load(), wraps, "the fake clock was moved by waits only")
			last, _ := unitSeq(l, slices.Max(slices.Concat(out...)))
			first := (testStart.UnixMilli() - intf.DefaultEpochMillis) / l.Unit.Milliseconds()
			assert.Equal(t, first+clk.waits.Load(), last, "each wait moved the clock by one unit")
		})
	}
}

// testExhaustionFakeClock issues the IDs of two whole units and a few more
// without moving the clock. The service must wait for the next unit each
// time (the fake clock jumps), and the (time, seq) pairs must be exactly
// unit u0 seq 0..max, u0+1 seq 0..max, u0+2 seq 0..4. Vesta's defect would
// show as seq 0 issued twice in u0+1: after its spin to the next unit it did
// not store that unit as the last one.
//
// Every ID around a wrap is taken with GenId, one by one. Min-granularity
// takes all of them so; max-peak takes the bulk of each unit with GenIds
// first (2 M single calls cost 4 s under -race).
func testExhaustionFakeClock(t *testing.T, pop string) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			clk := newFakeClock(testStart)
			svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Clock: clk, Machine: 5})
			per := l.Seq.Max() + 1
			total := 2*per + 5
			u0 := (testStart.UnixMilli() - intf.DefaultEpochMillis) / l.Unit.Milliseconds()
			ids := make([]intf.Id, 0, total)
			for int64(len(ids)) < total {
				// Up to 10 before the end of the unit, bulk; then single.
				if bulk := per - 10 - int64(len(ids))%per; per > 2048 && bulk > 0 {
					got, err := svc.GenIds(bg, int(min(bulk, intf.MaxBatch)))
					require.NoError(t, err)
					ids = append(ids, got...)
					continue
				}
				for range min(20, total-int64(len(ids))) {
					id, err := svc.GenId(bg)
					require.NoError(t, err)
					ids = append(ids, id)
				}
			}
			require.Len(t, ids, int(total))
			assertStrictlyIncreasing(t, l, ids)
			for i, id := range ids {
				u, s := unitSeq(l, id)
				if u != u0+int64(i)/per || s != int64(i)%per {
					require.Failf(t, "wrong (time, seq)", "ids[%d] is (%d, %d), want (%d, %d)", i, u, s, u0+int64(i)/per, int64(i)%per)
				}
			}
			assert.Equal(t, uint64(2), svc.Stats().ExhaustionWaits)
			assert.Equal(t, int64(2), clk.waits.Load())
			assert.Equal(t, testStart.Add(2*l.Unit), clk.Now(), "the clock moved exactly to the start of u0+2")
			n, err := checkUnique(l, [][]intf.Id{ids})
			require.NoError(t, err)
			assert.Equal(t, int(total), n)
		})
	}
}

// testExhaustionBatchesFakeClock is the same through GenIds, whose batches
// cross unit boundaries, interleaved with GenId calls right after a wrap.
func testExhaustionBatchesFakeClock(t *testing.T, pop string) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			clk := newFakeClock(testStart)
			svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Clock: clk})
			per := l.Seq.Max() + 1
			batch := min(int(per*3/2)+7, intf.MaxBatch)
			var all []intf.Id
			for len(all) < int(2*per+3) {
				ids, err := svc.GenIds(bg, batch)
				require.NoError(t, err)
				require.Len(t, ids, batch)
				assertStrictlyIncreasing(t, l, ids)
				all = append(all, ids...)
				id, err := svc.GenId(bg)
				require.NoError(t, err)
				all = append(all, id)
			}
			assertStrictlyIncreasing(t, l, all)
			u0 := (testStart.UnixMilli() - intf.DefaultEpochMillis) / l.Unit.Milliseconds()
			for i, id := range all {
				u, s := unitSeq(l, id)
				if u != u0+int64(i)/per || s != int64(i)%per {
					require.Failf(t, "wrong (time, seq)", "id %d is (%d, %d), want (%d, %d)", i, u, s, u0+int64(i)/per, int64(i)%per)
				}
			}
			assert.Equal(t, uint64(int64(len(all)-1)/per), svc.Stats().ExhaustionWaits)
		})
	}
}

// TestExhaustionRealClock runs a max-peak service of each populator on the
// real clock out of a unit: 2^20 IDs must be taken within one second, so
// the populator must really sleep until the next second. It stops at the
// first wait, which is on average half a second away. Under -race 2^20 IDs
// a second is within reach only without competition, so under -race this
// test is not parallel (Go runs it before the package's parallel tests
// start) and takes the populators one by one. Without -race a populator
// issues 2^20 IDs in a few milliseconds, even next to TestPopulators: the
// four run at once, in parallel with the other tests, and wait for the
// same second.
func TestExhaustionRealClock(t *testing.T) {
	if !raceEnabled {
		t.Parallel()
	}
	var wg sync.WaitGroup
	for _, pop := range service.Populators() {
		run := func() { t.Run(pop, func(t *testing.T) { testExhaustionRealClock(t, pop) }) }
		if raceEnabled {
			run()
		} else {
			wg.Go(run)
		}
	}
	wg.Wait()
}

func testExhaustionRealClock(t *testing.T, pop string) {
	typ := intf.MaxPeak
	l := layoutOf(t, typ)
	svc := newSvc(t, service.Settings{Populator: pop, Type: typ})
	// Only the last two batches are kept: the wrap is inside the batch
	// whose GenIds waited, or between it and the one before.
	var prev, cur []intf.Id
	for begin := time.Now(); svc.Stats().ExhaustionWaits == 0; {
		require.Less(t, time.Since(begin), 20*time.Second, "the sequence never ran out (GenIds too slow?)")
		ids, err := svc.GenIds(bg, intf.MaxBatch)
		require.NoError(t, err)
		if len(cur) > 0 {
			require.Less(t, cur[len(cur)-1], ids[0], "batches strictly increasing")
		}
		prev, cur = cur, ids
	}
	all := append(append([]intf.Id{}, prev...), cur...)
	// A few more after the wait.
	for range 3 {
		id, err := svc.GenId(bg)
		require.NoError(t, err)
		all = append(all, id)
	}
	assertStrictlyIncreasing(t, l, all)
	_, err := checkUnique(l, [][]intf.Id{all})
	require.NoError(t, err)
	// Find the wrap: a unit used up to its last seq, followed by seq 0 of
	// the next unit.
	wrapped := false
	for i := 1; i < len(all); i++ {
		pu, ps := unitSeq(l, all[i-1])
		u, s := unitSeq(l, all[i])
		if ps == l.Seq.Max() {
			assert.Equal(t, pu+1, u)
			assert.Equal(t, int64(0), s)
			wrapped = true
		}
	}
	assert.True(t, wrapped, "a unit's sequence was used up")
	last, _ := unitSeq(l, all[len(all)-1])
	nowUnit := (time.Now().UnixMilli() - intf.DefaultEpochMillis) / 1000
	assert.LessOrEqual(t, last, nowUnit, "the wait ended at or after the unit's start on the real clock")
}

// testCancelWhileExhausted: a caller whose context is done while the unit
// is used up gets the context's error, the populator stays usable (a lock
// is not left held) and nothing is lost or repeated.
func testCancelWhileExhausted(t *testing.T, pop string) {
	typ := intf.MinGranularity
	l := layoutOf(t, typ)
	clk := newFakeClock(testStart)
	svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Clock: clk})
	ids, err := svc.GenIds(bg, int(l.Seq.Max()+1))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = svc.GenId(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = svc.GenIds(ctx, 3)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, testStart, clk.Now(), "no wait happened")
	id, err := svc.GenId(bg)
	require.NoError(t, err)
	u0, _ := unitSeq(l, ids[0])
	u, s := unitSeq(l, id)
	assert.Equal(t, u0+1, u)
	assert.Equal(t, int64(0), s)
	assertStrictlyIncreasing(t, l, append(ids, id))
	// A deadline works the same way.
	_, err = svc.GenIds(bg, int(l.Seq.Max()))
	require.NoError(t, err)
	ctx, cancel = context.WithTimeout(bg, time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, err = svc.GenId(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// testSteppingClock injects a raw time source that jumps back by several
// units every so often, against the Clock contract, from 8 goroutines: the
// IDs must stay unique, every call must succeed, and each goroutine's time
// field must never decrease.
func testSteppingClock(t *testing.T, pop string) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			// Per 100 reads: 99 steps of a 30th of a unit forward, then
			// back by 2.5 units: net forward about 0.8 units.
			l := layoutOf(t, typ)
			clk := newSteppingClock(testStart, l.Unit/30, 100, 5*l.Unit/2)
			svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Clock: clk})
			const g, n = 8, 20_000
			out := genConcurrently(t, svc, g, n)
			checkConcurrentRun(t, l, out, g*n)
			assert.Greater(t, clk.backs.Load(), int64(100), "the clock went back many times")
			// One goroutine alone sees one strictly increasing series.
			ids, err := svc.GenIds(bg, 1000)
			require.NoError(t, err)
			single := make([]intf.Id, 0, 5000)
			for range 5000 {
				id, err := svc.GenId(bg)
				require.NoError(t, err)
				single = append(single, id)
			}
			assertStrictlyIncreasing(t, l, append(ids, single...))
			_, err = checkUnique(l, append(out, ids, single))
			require.NoError(t, err)
		})
	}
}

func testGenIdsCount(t *testing.T, pop string) {
	svc := newSvc(t, service.Settings{Populator: pop})
	for _, n := range []int{0, -1, intf.MaxBatch + 1, -1 << 40} {
		ids, err := svc.GenIds(bg, n)
		assert.Nil(t, ids)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, "count %d", n)
		assert.Equal(t, "count", fe.Field)
		assert.Equal(t, int64(n), fe.Value)
		assert.Equal(t, int64(1), fe.Min)
		assert.Equal(t, int64(intf.MaxBatch), fe.Max)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
	ids, err := svc.GenIds(bg, 1)
	require.NoError(t, err)
	assert.Len(t, ids, 1)
}

// testGenIdsLargeBatch takes the largest batch on the real clock. For
// min-granularity that spans about a hundred units.
func testGenIdsLargeBatch(t *testing.T, pop string) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			svc := newSvc(t, service.Settings{Populator: pop, Type: typ, Machine: 1023, GenMethod: 3, Version: 1})
			ids, err := svc.GenIds(bg, intf.MaxBatch)
			require.NoError(t, err)
			require.Len(t, ids, intf.MaxBatch)
			assertStrictlyIncreasing(t, l, ids)
			n, err := checkUnique(l, [][]intf.Id{ids})
			require.NoError(t, err)
			assert.Equal(t, intf.MaxBatch, n)
			f := fieldsOf(ids[len(ids)-1])
			assert.Equal(t, intf.IdFields{Machine: 1023, GenMethod: 3, Type: int64(typ), Version: 1}, intf.IdFields{Machine: f.Machine, GenMethod: f.GenMethod, Type: f.Type, Version: f.Version})
			first, _ := unitSeq(l, ids[0])
			last, _ := unitSeq(l, ids[len(ids)-1])
			if typ == intf.MinGranularity {
				assert.GreaterOrEqual(t, last-first, int64(intf.MaxBatch/1024), "a min-granularity unit holds 1,024 IDs")
			}
		})
	}
}

// testGenIdsConcurrentMixed mixes batches and single IDs from several
// goroutines on the real clock.
func testGenIdsConcurrentMixed(t *testing.T, pop string) {
	const batchers, batches, size = 4, 5, 20_000
	const singles, n = 4, 20_000
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			svc := newSvc(t, service.Settings{Populator: pop, Type: typ})
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				all  [][]intf.Id
				errs []error
			)
			for range batchers {
				wg.Go(func() {
					for range batches {
						ids, err := svc.GenIds(bg, size)
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						} else {
							all = append(all, ids)
						}
						mu.Unlock()
					}
				})
			}
			for range singles {
				wg.Go(func() {
					ids := make([]intf.Id, 0, n)
					for range n {
						id, err := svc.GenId(bg)
						if err != nil {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
							return
						}
						ids = append(ids, id)
					}
					mu.Lock()
					all = append(all, ids)
					mu.Unlock()
				})
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs...))
			require.Len(t, all, batchers*batches+singles)
			for _, ids := range all {
				assertStrictlyIncreasing(t, l, ids)
			}
			total, err := checkUnique(l, all)
			require.NoError(t, err)
			assert.Equal(t, batchers*batches*size+singles*n, total)
		})
	}
}

func TestPopulatorUnknown(t *testing.T) {
	_, err := service.New(bg, service.Settings{Populator: "nope", NoDataDir: true, Logger: discardLog})
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `populator "nope"`)
	for _, p := range service.Populators() {
		assert.Contains(t, err.Error(), p, "the error lists the valid names")
	}
	svc := newSvc(t, service.Settings{})
	assert.Equal(t, "lock", svc.Settings().Populator)
}
