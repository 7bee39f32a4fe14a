package segment_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
)

// clockAt is a fake clock set to t.
func clockAt(t time.Time) *segtest.Clock {
	c := segtest.NewClock()
	c.Advance(t.Sub(c.Now()))
	return c
}

// skewed is a node's clock whose wall time is off by d from the shared
// fake time, as a node with a wrong clock.
type skewed struct {
	*segtest.Clock
	d time.Duration
}

func (s skewed) Now() time.Time { return s.Clock.Now().Add(s.d) }

// periodNodes starts n generators on one Mem holding a day tag, the
// database's clock being base; node i's wall clock is off by i hours.
func periodNodes(t *testing.T, base *segtest.Clock, n int, pt segment.PeriodTag) (*segtest.Mem, []*segment.Generator) {
	t.Helper()
	ctx := context.Background()
	mem := segtest.NewMem()
	mem.SetNow(base.Now)
	require.NoError(t, mem.CreatePeriodTag(ctx, pt))
	var gens []*segment.Generator
	for i := range n {
		g, err := segtest.Open(ctx, mem, nil, segment.Settings{Logger: quiet, Clock: skewed{base, time.Duration(i) * time.Hour}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		gens = append(gens, g)
	}
	return mem, gens
}

type issued struct {
	n   segment.Number
	pre time.Time // the database's time before the call
}

// Two nodes (one with its wall clock an hour ahead, which decides
// nothing) serve a day tag under load while the database's clock crosses
// midnight: every text is unique, the new day restarts at 1, and no
// number of the old day is issued by a call made once the database's
// clock had passed midnight (so none once a range of the new day
// existed). Run under -race.
func TestNextNumberAcrossADayBoundary(t *testing.T) {
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	base := clockAt(midnight.Add(-500 * time.Millisecond))
	pt := segment.PeriodTag{Tag: "order", Group: segment.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 7}
	_, gens := periodNodes(t, base, 2, pt)

	var (
		done     atomic.Bool
		newDay   atomic.Int64
		mu       sync.Mutex
		all      []issued
		wg       sync.WaitGroup
		failures atomic.Int64
		count    atomic.Int64
	)
	for w := range 8 {
		g := gens[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []issued
			for !done.Load() {
				pre := base.Now()
				n, err := g.NextNumber(context.Background(), "order")
				if err != nil {
					failures.Add(1)
					t.Errorf("NextNumber: %v", err)
					return
				}
				if n.Period == "20261128" {
					newDay.Add(1)
				}
				count.Add(1)
				mine = append(mine, issued{n, pre})
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	// A step of the clock once a number was issued since the last one
	// (the nodes never wait for it: segtest.Clock.Sleep moves it itself).
	for last := int64(0); base.Now().Before(midnight.Add(500*time.Millisecond)) || newDay.Load() < 300; {
		for count.Load() == last && failures.Load() == 0 {
			runtime.Gosched()
		}
		if failures.Load() > 0 {
			break
		}
		last = count.Load()
		base.Advance(time.Millisecond)
		runtime.Gosched()
	}
	done.Store(true)
	wg.Wait()

	seen := map[string]bool{}
	seqs := map[string]map[int64]bool{"20261127": {}, "20261128": {}}
	for _, x := range all {
		require.False(t, seen[x.n.Text], "%s issued twice", x.n.Text)
		seen[x.n.Text] = true
		require.Contains(t, seqs, x.n.Period)
		seqs[x.n.Period][x.n.Seq] = true
		assert.Equal(t, fmt.Sprintf("ORD%s%06d", x.n.Period, x.n.Seq), x.n.Text)
		if x.n.Period == "20261127" && !x.pre.Before(midnight) {
			t.Errorf("%s issued by a call made at %s, after the database's midnight", x.n.Text, x.pre.Format(time.RFC3339Nano))
		}
	}
	assert.NotEmpty(t, seqs["20261127"])
	assert.True(t, seqs["20261128"][1], "the new day starts at 1")
	assert.True(t, seqs["20261127"][1])
}

// A sequence past the format's width is an error naming the tag, the
// period and the width; the next period serves again.
func TestNextNumberWidthOverflow(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	_, gens := periodNodes(t, base, 1, segment.PeriodTag{Tag: "small", Group: segment.GroupDay, Format: "S{yyMMdd}-{seq:2}", Step: 30})
	ctx := context.Background()
	for i := int64(1); i <= 99; i++ {
		n, err := gens[0].NextNumber(ctx, "small")
		require.NoError(t, err)
		require.Equal(t, i, n.Seq)
	}
	_, err := gens[0].NextNumber(ctx, "small")
	require.ErrorIs(t, err, segment.ErrNumberOverflow)
	for _, s := range []string{`"small"`, "20261127", "{seq:2}", "100"} {
		assert.Contains(t, err.Error(), s)
	}
	base.Advance(12 * time.Hour)
	n, err := gens[0].NextNumber(ctx, "small")
	require.NoError(t, err)
	assert.Equal(t, segment.Number{Text: "S261128-01", Period: "20261128", Seq: 1}, n)
}

// A restarted node continues above the numbers issued before it, and a
// month tag keeps its period across days.
func TestNextNumberRestartAndMonth(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	mem, gens := periodNodes(t, base, 1, segment.PeriodTag{Tag: "inv", Group: segment.GroupMonth, Format: "INV-{yyyy}-{MM}-{seq:5}", Step: 10})
	ctx := context.Background()
	n, err := gens[0].NextNumber(ctx, "inv")
	require.NoError(t, err)
	assert.Equal(t, "INV-2026-11-00001", n.Text)
	require.NoError(t, gens[0].Close())
	g, err := segtest.Open(ctx, mem, nil, segment.Settings{Logger: quiet, Clock: base})
	require.NoError(t, err)
	defer g.Close()
	base.Advance(24 * time.Hour)
	n, err = g.NextNumber(ctx, "inv")
	require.NoError(t, err)
	assert.Equal(t, segment.Number{Text: "INV-2026-11-00011", Period: "202611", Seq: 11}, n)
	base.Advance(4 * 24 * time.Hour)
	n, err = g.NextNumber(ctx, "inv")
	require.NoError(t, err)
	assert.Equal(t, "INV-2026-12-00001", n.Text)
}

type leafOnly struct{ segment.Store }

func TestNextNumberErrors(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	_, gens := periodNodes(t, base, 1, segment.PeriodTag{Tag: "order", Group: segment.GroupDay, Format: "{yyyyMMdd}{seq}", Step: 10})
	ctx := context.Background()
	_, err := gens[0].NextNumber(ctx, "nope")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	_, err = gens[0].NextNumber(ctx, "bad tag")
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)

	g, err := segment.New(ctx, segment.Settings{Store: leafOnly{segtest.NewMem()}, Logger: quiet})
	require.NoError(t, err)
	_, err = g.NextNumber(ctx, "order")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.ErrorIs(t, err, segment.ErrNoPeriods)
	require.NoError(t, g.Close())
	_, err = g.NextNumber(ctx, "order")
	assert.ErrorIs(t, err, intf.ErrClosed)

	down := segtest.Wrap(segtest.NewMem())
	require.NoError(t, down.CreatePeriodTag(ctx, segment.PeriodTag{Tag: "order", Group: segment.GroupYear, Format: "{yyyy}{seq}", Step: 1}))
	g, err = segment.New(ctx, segment.Settings{Store: down, Logger: quiet})
	require.NoError(t, err)
	defer g.Close()
	_, err = g.NextNumber(ctx, "order")
	require.NoError(t, err)
	down.SetDown(true)
	_, err = g.NextNumber(ctx, "order")
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.True(t, strings.Contains(err.Error(), `"order"`))
}

// A period's counter that goes back in the store (a restore, a failover to
// a lagging standby) gives a range below the one held: refused, never a
// number issued twice.
func TestNextNumberRangeBelowIsRefused(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	mem, gens := periodNodes(t, base, 1, segment.PeriodTag{Tag: "order", Group: segment.GroupDay, Format: "O{yyyyMMdd}{seq:4}", Step: 10})
	ctx := context.Background()
	seen := map[string]bool{}
	for range 10 {
		n, err := gens[0].NextNumber(ctx, "order")
		require.NoError(t, err)
		seen[n.Text] = true
	}
	mem.EditPeriod("order", "20261127", 1) // back to the start of the day
	_, err := gens[0].NextNumber(ctx, "order")
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), "below the range held")
	mem.EditPeriod("order", "20261127", 11) // an operator puts it right
	n, err := gens[0].NextNumber(ctx, "order")
	require.NoError(t, err)
	assert.False(t, seen[n.Text], "%s issued twice", n.Text)
	assert.Equal(t, int64(11), n.Seq)
}
