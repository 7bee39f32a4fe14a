package generatorsuite_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/segdefault"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segbuf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// One instance alone on a tag hands out exactly initial, initial+1, ...:
// ranges follow each other with nothing lost, across many range switches
// and any mix of single IDs and batches.
func TestDenseAndIncreasing(t *testing.T) {
	t.Parallel() // its own database; TestOutage, which stops the shared server, is serial: it runs before
	forEachBackend(t, func(t *testing.T, b backend) {
		f := newFixture(t, b.newDB(t), nil, segstore.TagInfo{Tag: "d", MaxId: 1, Step: 10})
		var ids []int64
		for i := 0; len(ids) < 5000; i++ {
			if i%3 == 0 {
				id, err := f.g.NextId(context.Background(), "d")
				require.NoError(t, err)
				ids = append(ids, id)
				continue
			}
			ids = append(ids, take(t, f.g, "d", i%50+1)...)
		}
		assert.Equal(t, span(1, len(ids)), ids)

		st := settle(t, f.g, "d")
		allocs := f.st.Allocs()
		require.Greater(t, len(allocs), 5, "several ranges were used")
		end := int64(1)
		for _, a := range allocs {
			assert.Equal(t, end+a.Applied(), a.MaxId, "ranges are contiguous")
			end = a.MaxId
		}
		assert.Equal(t, end, int64(len(ids))+1+st.Current+st.Spare, "every allocated ID was issued or is buffered")
	})
}

// Two instances share one database under concurrent load: every ID is
// unique and each goroutine sees its instance's IDs strictly increasing.
func TestTwoInstancesConcurrent(t *testing.T) {
	t.Parallel() // its own database; TestOutage, which stops the shared server, is serial: it runs before
	forEachBackend(t, func(t *testing.T, b backend) {
		db := b.newDB(t)
		small := func(s *segment.Settings) { s.MaxStep = 64 } // many ranges, many DB round trips
		f1 := newFixture(t, db, small, segstore.TagInfo{Tag: "c", MaxId: 1, Step: 16})
		f2 := newFixture(t, db, small)
		const goroutines, perGoroutine = 4, 1500
		results := make([][]int64, 2*goroutines)
		var wg sync.WaitGroup
		for i := range results {
			g := []*segment.Generator{f1.g, f2.g}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 1; len(results[i]) < perGoroutine; n = n%17 + 1 {
					ids, err := g.NextIds(context.Background(), "c", n)
					if !assert.NoError(t, err) {
						return
					}
					results[i] = append(results[i], ids...)
				}
			}()
		}
		// Refreshing the tag list meanwhile must not disturb the buffers.
		f1.clock.Tick()
		f2.clock.Tick()
		wg.Wait()

		seen, total := map[int64]bool{}, 0
		for _, ids := range results {
			requireIncreasing(t, ids)
			total += len(ids)
			for _, id := range ids {
				require.False(t, seen[id], "duplicate %d", id)
				seen[id] = true
			}
		}
		assert.Equal(t, total, len(seen))
		assert.GreaterOrEqual(t, total, len(results)*perGoroutine)
		assert.Greater(t, f1.st.Calls()+f2.st.Calls(), int64(20), "both instances allocated many ranges")
	})
}

// The database stops: the buffers keep serving, then requests fail fast
// with ErrUnavailable, and after the restart issuing resumes above every
// ID issued before, with no duplicate.
func TestOutage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		fixed := func(s *segment.Settings) { s.MaxStep = 100 }
		f := newFixture(t, b.newDB(t), fixed, segstore.TagInfo{Tag: "o", MaxId: 1, Step: 100})
		ids := take(t, f.g, "o", 20) // loads the first range and starts the preload
		st := settle(t, f.g, "o")
		require.Equal(t, []int64{80, 100}, []int64{st.Current, st.Spare}, "%v", st)
		assert.Equal(t, segbuf.Position{Start: 1, Next: 21, End: 101}, st.CurrentRange, "the range the first 20 IDs came from")
		assert.Equal(t, int64(80), st.CurrentRange.Left())
		assert.True(t, st.HasSpare)
		assert.Equal(t, segbuf.Position{Start: 101, Next: 101, End: 201}, st.SpareRange, "the range loaded ahead, untouched")

		end := b.outage(t, f.st)
		for range 6 {
			ids = append(ids, take(t, f.g, "o", 30)...) // all 180 buffered IDs
		}
		assert.Equal(t, span(1, 200), ids, "the buffers served everything they held")

		_, err := f.g.NextId(context.Background(), "o")
		require.ErrorIs(t, err, intf.ErrUnavailable)
		assert.NotErrorIs(t, err, intf.ErrUnknownTag)
		_, err = f.g.NextIds(context.Background(), "o", 5)
		require.ErrorIs(t, err, intf.ErrUnavailable)
		st, err = f.g.Status("o")
		require.NoError(t, err)
		assert.Error(t, st.LastError, "the failed load is reported")

		end()
		ids = append(ids, nextAfterRecovery(t, f, "o"))
		ids = append(ids, take(t, f.g, "o", 150)...)
		requireIncreasing(t, ids)
		st = settle(t, f.g, "o")
		assert.NoError(t, st.LastError)
	})
}

// nextAfterRecovery retries NextId, moving the clock past the retry
// interval each time, until the store answers again; every failure on the
// way must be ErrUnavailable.
func nextAfterRecovery(t *testing.T, f *fixture, tag string) int64 {
	t.Helper()
	for attempt := 0; ; attempt++ {
		id, err := f.g.NextId(context.Background(), tag)
		if err == nil {
			return id
		}
		require.ErrorIs(t, err, intf.ErrUnavailable)
		require.Less(t, attempt, 1000, "no recovery: %v", err)
		settle(t, f.g, tag)
		f.clock.Advance(time.Second)
	}
}

// An operator rolls max_id back (a restored backup): the Generator refuses
// the ranges that overlap what it issued, and resumes above them.
func TestRangeBelowLastIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		fixed := func(s *segment.Settings) { s.MaxStep = 10 }
		f := newFixture(t, b.newDB(t), fixed, segstore.TagInfo{Tag: "r", MaxId: 1, Step: 10})
		ids := take(t, f.g, "r", 2)
		st := settle(t, f.g, "r")
		f.db.exec(t, "UPDATE leaf_alloc SET max_id = 1 WHERE biz_tag = 'r'")
		ids = append(ids, take(t, f.g, "r", int(st.Current+st.Spare))...)
		ids = append(ids, nextAfterRecovery(t, f, "r"))
		requireIncreasing(t, ids)
		assert.Equal(t, int64(21), ids[len(ids)-1], "the first ID above the refused ranges")
	})
}

// Leaf's dynamic step, driven by the injected clock.
func TestDynamicStep(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		bounded := func(s *segment.Settings) { s.MaxStep = 400 }
		f := newFixture(t, b.newDB(t), bounded, segstore.TagInfo{Tag: "s", MaxId: 1, Step: 100})
		take(t, f.g, "s", 1)
		for _, d := range []string{"1m", "1m", "1m", "20m", "40m", "40m", "40m"} {
			f.clock.Advance(mustDuration(t, d))
			triggerLoad(t, f, "s")
		}
		var steps []int64
		for _, a := range f.st.Allocs() {
			steps = append(steps, a.Applied())
		}
		// first: the row's step; then double, double, capped at MaxStep,
		// keep (15-30 min), halve, halve, not below the row's step.
		assert.Equal(t, []int64{100, 200, 400, 400, 400, 200, 100, 100}, steps)
		assert.Equal(t, int64(0), f.st.Allocs()[0].Asked, "the first range asks for the row's step")
	})
}

// triggerLoad uses the buffers until exactly one more range is loaded.
func triggerLoad(t *testing.T, f *fixture, tag string) {
	t.Helper()
	st := settle(t, f.g, tag)
	before := len(f.st.Allocs())
	n := st.Current / 2
	if st.Spare > 0 {
		n = st.Current + st.Spare/2
	}
	take(t, f.g, tag, int(max(n, 1)))
	settle(t, f.g, tag)
	require.Len(t, f.st.Allocs(), before+1, "one load")
}

// Tags added to the database appear at the next refresh; removed ones
// disappear; a failed refresh keeps the list. (The reread after a miss is
// off here: TestRefreshAfterMiss covers it.)
func TestRefresh(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		noMiss := func(s *segment.Settings) { s.MissRefreshInterval = -1 }
		f := newFixture(t, b.newDB(t), noMiss, segstore.TagInfo{Tag: "old", MaxId: 1, Step: 10})
		ctx := context.Background()
		f.tag(t, "late", 500, 10)
		_, err := f.g.NextId(ctx, "late")
		require.ErrorIs(t, err, intf.ErrUnknownTag, "not before the refresh")

		refresh := func() { f.clock.Tick(); f.clock.Tick() } // the second tick waits for the first refresh
		refresh()
		id, err := f.g.NextId(ctx, "late")
		require.NoError(t, err)
		assert.Equal(t, int64(500), id)
		assert.Equal(t, []string{"late", "old"}, f.g.Tags())

		f.st.SetDown(true)
		refresh()
		assert.Equal(t, []string{"late", "old"}, f.g.Tags(), "a failed refresh keeps the list")
		f.st.SetDown(false)

		f.db.exec(t, "DELETE FROM leaf_alloc WHERE biz_tag = 'late'")
		refresh()
		_, err = f.g.NextId(ctx, "late")
		require.ErrorIs(t, err, intf.ErrUnknownTag)
		assert.Equal(t, []string{"old"}, f.g.Tags())

		f.tag(t, "now", 7, 10)
		require.NoError(t, f.g.Refresh(ctx), "Refresh on demand")
		id, err = f.g.NextId(ctx, "now")
		require.NoError(t, err)
		assert.Equal(t, int64(7), id)
	})
}

// A tag deleted and re-created lower (an operator's mistake, or another
// instance's segmentTags with initialMaxId 1) must not make an instance
// repeat the IDs it issued before the delete.
func TestTagRecreatedLowerRepeatsNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		noMiss := func(s *segment.Settings) { s.MissRefreshInterval = -1 }
		f := newFixture(t, b.newDB(t), noMiss, segstore.TagInfo{Tag: "order", MaxId: 1, Step: 10})
		ctx := context.Background()
		refresh := func() { f.clock.Tick(); f.clock.Tick() }
		first := take(t, f.g, "order", 5) // 1..5 of the range [1, 11)
		settle(t, f.g, "order")           // the spare [11, 21) is loaded too

		f.db.exec(t, "DELETE FROM leaf_alloc WHERE biz_tag = 'order'")
		refresh()
		require.NotContains(t, f.g.Tags(), "order")
		f.tag(t, "order", 1, 10)
		refresh()
		require.Contains(t, f.g.Tags(), "order")

		seen := map[int64]bool{}
		for _, id := range first {
			seen[id] = true
		}
		for range 40 {
			id, err := f.g.NextId(ctx, "order")
			if err != nil {
				// The ranges below what it held are refused (each refusal
				// still advances max_id); retries get past them.
				require.ErrorIs(t, err, intf.ErrUnavailable)
				f.clock.Advance(time.Second)
				continue
			}
			require.False(t, seen[id], "ID %d issued twice", id)
			seen[id] = true
		}
	})
}

// A tag created while the Generator runs is served at its first request:
// the miss rereads the tag list, at most once per MissRefreshInterval, and
// concurrent misses share one reread.
func TestRefreshAfterMiss(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := newFixture(t, b.newDB(t), nil, segstore.TagInfo{Tag: "old", MaxId: 1, Step: 10})
		ctx := context.Background()
		reads := f.st.TagReads()

		f.tag(t, "new", 40, 10)
		id, err := f.g.NextId(ctx, "new")
		require.NoError(t, err, "served at the first request, not after the periodic refresh")
		assert.Equal(t, int64(40), id)
		assert.Equal(t, reads+1, f.st.TagReads(), "one reread")
		assert.Equal(t, []string{"new", "old"}, f.g.Tags())

		// Within the interval, unknown tags cost no reread.
		f.tag(t, "later", 70, 10)
		for range 50 {
			_, err = f.g.NextIds(ctx, "later", 2)
			require.ErrorIs(t, err, intf.ErrUnknownTag)
		}
		assert.Equal(t, reads+1, f.st.TagReads(), "a flood of unknown tags does not reach the database")

		// After it, one of many concurrent misses rereads; all are served.
		f.clock.Advance(segdefault.MissRefreshInterval)
		var wg sync.WaitGroup
		got := make([]int64, 8)
		for i := range got {
			wg.Go(func() {
				id, err := f.g.NextId(ctx, "later")
				if assert.NoError(t, err) {
					got[i] = id
				}
			})
		}
		wg.Wait()
		assert.ElementsMatch(t, span(70, len(got)), got)
		assert.Equal(t, reads+2, f.st.TagReads(), "concurrent misses share one reread")

		// With the database down an unknown tag may well exist: the answer
		// is "unavailable" (retry), not "unknown" (give up), within the
		// interval too; known tags are served from their buffers.
		f.clock.Advance(segdefault.MissRefreshInterval)
		f.st.SetDown(true)
		for range 2 {
			_, err = f.g.NextId(ctx, "missing")
			assert.ErrorIs(t, err, intf.ErrUnavailable)
			assert.NotErrorIs(t, err, intf.ErrUnknownTag)
		}
		_, err = f.g.NextId(ctx, "new") // its range [40, 50) is loaded
		assert.NoError(t, err)
		f.st.SetDown(false)
		f.clock.Advance(segdefault.MissRefreshInterval)
		_, err = f.g.NextId(ctx, "missing")
		assert.ErrorIs(t, err, intf.ErrUnknownTag, "once the database answers, unknown is unknown")

		// Malformed tags are refused without a reread.
		f.clock.Advance(segdefault.MissRefreshInterval)
		before := f.st.TagReads()
		_, err = f.g.NextId(ctx, "no/slash")
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Equal(t, before, f.st.TagReads())
	})
}

// The reread after a miss is shared: one caller whose context ends early
// gets its own context's error, and the others the reread's true answer.
func TestMissRereadOutlivesAnImpatientCaller(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := newFixture(t, b.newDB(t), nil, segstore.TagInfo{Tag: "old", MaxId: 1, Step: 10})
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := f.g.NextId(done, "ghost")
		require.ErrorIs(t, err, context.Canceled)
		_, err = f.g.NextId(context.Background(), "ghost")
		assert.ErrorIs(t, err, intf.ErrUnknownTag, "the database answered: the tag is unknown")
		assert.NotErrorIs(t, err, intf.ErrUnavailable)
	})
}

func TestBadRequests(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		f := newFixture(t, b.newDB(t), nil,
			segstore.TagInfo{Tag: "ok", MaxId: 1, Step: 10},
			segstore.TagInfo{Tag: "full", MaxId: math.MaxInt64 - 5, Step: 5})

		_, err := f.g.NextIds(ctx, "missing", 1)
		assert.ErrorIs(t, err, intf.ErrUnknownTag)
		_, err = f.g.NextId(ctx, "missing")
		assert.ErrorIs(t, err, intf.ErrUnknownTag)
		_, err = f.g.Status("missing")
		assert.ErrorIs(t, err, intf.ErrUnknownTag)

		_, err = f.g.NextIds(ctx, "no/slash", 1)
		var te *intf.TagError
		require.ErrorAs(t, err, &te)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)

		for _, n := range []int{0, -1, intf.MaxBatch + 1} {
			_, err = f.g.NextIds(ctx, "ok", n)
			var fe *intf.FieldError
			require.ErrorAs(t, err, &fe, n)
			assert.Equal(t, "count", fe.Field)
		}
		ids := take(t, f.g, "ok", intf.MaxBatch)
		assert.Equal(t, span(1, intf.MaxBatch), ids, "the largest batch crosses many ranges")

		ids = take(t, f.g, "full", 5)
		assert.Equal(t, span(math.MaxInt64-5, 5), ids)
		_, err = f.g.NextId(ctx, "full")
		assert.ErrorIs(t, err, segstore.ErrMaxIdOverflow)
		assert.NotErrorIs(t, err, intf.ErrUnavailable)

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		f.tag(t, "fresh", 1, 10)
		require.NoError(t, f.g.Refresh(ctx))
		_, err = f.g.NextId(cancelled, "fresh")
		assert.ErrorIs(t, err, context.Canceled, "waiting for the first range honours ctx")

		require.NoError(t, f.g.Close())
		_, err = f.g.NextId(ctx, "ok")
		assert.ErrorIs(t, err, intf.ErrClosed)
		assert.NoError(t, f.g.Close(), "Close twice")
	})
}

func mustDuration(t *testing.T, s string) (d time.Duration) {
	t.Helper()
	d, err := time.ParseDuration(s)
	require.NoError(t, err)
	return d
}

// A tag not yet asked for reports the row's step, read with the tag list:
// /segment shows a configured tag as step 0 (nothing loaded), dbStep 500,
// not as 0 and 0. A row's step changed in the database shows at the next
// reread.
func TestStatusBeforeTheFirstLoad(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := newFixture(t, b.newDB(t), nil, segstore.TagInfo{Tag: "o", MaxId: 1, Step: 500})
		st, err := f.g.Status("o")
		require.NoError(t, err)
		assert.Equal(t, segbuf.Status{Floor: 500}, st)

		f.db.exec(t, "UPDATE leaf_alloc SET step = 700 WHERE biz_tag = 'o'")
		require.NoError(t, f.g.Refresh(context.Background()))
		st, err = f.g.Status("o")
		require.NoError(t, err)
		assert.Equal(t, int64(700), st.Floor)

		take(t, f.g, "o", 1)
		st = settle(t, f.g, "o")
		assert.Equal(t, []int64{700, 700}, []int64{st.Step, st.Floor}, "the first range has the row's step")
	})
}
