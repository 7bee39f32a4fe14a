package segment_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
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

func (s skewed) NowNanos() int64 { return s.Clock.NowNanos() + int64(s.d) }

func (s skewed) WaitUntil(ctx context.Context, t int64) error {
	return s.Clock.WaitUntil(ctx, t-int64(s.d))
}

// periodNodes starts n generators on one Mem holding a day tag, the
// database's clock being base; node i's wall clock is off by i hours.
func periodNodes(t *testing.T, base *segtest.Clock, n int, pt segstore.PeriodTag) (*segtest.Mem, []*segment.Generator) {
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

// Two nodes (one with its wall clock an hour ahead, which decides
// nothing) serve a day tag under load while the database's clock crosses
// midnight: segtest.DayBoundary, the one boundary test of every store,
// here on Mem, which reads the nodes' fake time. Run under -race.
func TestNextNumberAcrossADayBoundary(t *testing.T) {
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	base := clockAt(midnight.Add(-500 * time.Millisecond))
	pt := segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 7}
	_, gens := periodNodes(t, base, 2, pt)
	segtest.DayBoundary{Gens: gens, Tag: "order", Clock: base, Midnight: midnight,
		Step: time.Millisecond, After: 500 * time.Millisecond, NewDay: 300, Callers: 8}.Run(t)
}

// A sequence past the format's width is an error naming the tag, the
// period and the width; the next period serves again.
func TestNextNumberWidthOverflow(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	_, gens := periodNodes(t, base, 1, segstore.PeriodTag{Tag: "small", Group: segstore.GroupDay, Format: "S{yyMMdd}-{seq:2}", Step: 30})
	ctx := context.Background()
	for i := int64(1); i <= 99; i++ {
		n, err := gens[0].NextNumber(ctx, "small")
		require.NoError(t, err)
		require.Equal(t, i, n.Seq)
	}
	_, err := gens[0].NextNumber(ctx, "small")
	require.ErrorIs(t, err, segstore.ErrNumberOverflow)
	for _, s := range []string{`"small"`, "20261127", "{seq:2}", "99"} {
		assert.Contains(t, err.Error(), s)
	}
	base.Advance(12 * time.Hour)
	n, err := gens[0].NextNumber(ctx, "small")
	require.NoError(t, err)
	assert.Equal(t, intf.SegmentNumber{Text: "S261128-01", Period: "20261128", Seq: 1}, n)
}

// A restarted node continues above the numbers issued before it, and a
// month tag keeps its period across days.
func TestNextNumberRestartAndMonth(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	mem, gens := periodNodes(t, base, 1, segstore.PeriodTag{Tag: "inv", Group: segstore.GroupMonth, Format: "INV-{yyyy}-{MM}-{seq:5}", Step: 10})
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
	assert.Equal(t, intf.SegmentNumber{Text: "INV-2026-11-00011", Period: "202611", Seq: 11}, n)
	base.Advance(4 * 24 * time.Hour)
	n, err = g.NextNumber(ctx, "inv")
	require.NoError(t, err)
	assert.Equal(t, "INV-2026-12-00001", n.Text)
}

type leafOnly struct{ segstore.Store }

func TestNextNumberErrors(t *testing.T) {
	base := clockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	_, gens := periodNodes(t, base, 1, segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "{yyyyMMdd}{seq}", Step: 10})
	ctx := context.Background()
	_, err := gens[0].NextNumber(ctx, "nope")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	_, err = gens[0].NextNumber(ctx, "bad tag")
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)

	g, err := segment.New(ctx, segment.Settings{Store: leafOnly{segtest.NewMem()}, Logger: quiet})
	require.NoError(t, err)
	_, err = g.NextNumber(ctx, "order")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.ErrorIs(t, err, segstore.ErrNoPeriods)
	require.NoError(t, g.Close())
	_, err = g.NextNumber(ctx, "order")
	assert.ErrorIs(t, err, intf.ErrClosed)

	down := segtest.Wrap(segtest.NewMem())
	require.NoError(t, down.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: "order", Group: segstore.GroupYear, Format: "{yyyy}{seq}", Step: 1}))
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
	mem, gens := periodNodes(t, base, 1, segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "O{yyyyMMdd}{seq:4}", Step: 10})
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

// A used-up period is refused without a store call until the node's
// clock says the database's has reached the period's end: then one range
// of the next period, from 1. A database whose clock ran slow, 50 ms
// behind by then, costs one more range of the old period, and the call
// waits that out.
func TestNextNumberExhaustedUntilThePeriodEnds(t *testing.T) {
	for _, lag := range []time.Duration{0, 50 * time.Millisecond} {
		t.Run(lag.String(), func(t *testing.T) {
			ctx := context.Background()
			noon := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			base := clockAt(noon)
			mem := segtest.NewMem()
			mem.SetNow(func() time.Time { // lag behind the nodes' time after 12 hours
				d := base.Now().Sub(noon)
				return noon.Add(d - time.Duration(float64(lag)*float64(d)/float64(12*time.Hour)))
			})
			require.NoError(t, mem.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: "t", Group: segstore.GroupDay, Format: "T{yyyyMMdd}{seq:1}", Step: 5}))
			st := segtest.Wrap(mem)
			g, err := segment.New(ctx, segment.Settings{Store: st, Clock: base, Logger: quiet})
			require.NoError(t, err)
			defer g.Close()
			for range 9 {
				_, err := g.NextNumber(ctx, "t")
				require.NoError(t, err)
			}
			drawn := st.Calls()
			_, err = g.NextNumber(ctx, "t")
			var pe *intf.PeriodExhaustedError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, 12*time.Hour, pe.RetryAfter, "until the database's midnight, at the node's rate")

			base.Advance(12*time.Hour - time.Nanosecond)
			_, err = g.NextNumber(ctx, "t")
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, time.Nanosecond, pe.RetryAfter)
			assert.Equal(t, drawn, st.Calls(), "no store call while the period lasts")

			base.Advance(time.Nanosecond)
			var n intf.SegmentNumber
			done := make(chan error, 1)
			go func() {
				var err error
				n, err = g.NextNumber(ctx, "t")
				done <- err
			}()
			if lag > 0 {
				// The old day's range came too late to serve: the call
				// waits on the clock until the database's is surely past
				// midnight (a wait within the second; the refresh loop's
				// ends a minute on).
				wake := base.NextWait(noon.Add(12*time.Hour + time.Second))
				assert.True(t, wake.After(base.Now()), "a wait ahead of the time")
				base.Advance(wake.Sub(base.Now()))
			}
			require.NoError(t, <-done)
			assert.Equal(t, intf.SegmentNumber{Text: "T202611281", Period: "20261128", Seq: 1}, n)
			extra := int64(0)
			if lag > 0 {
				extra = 1
			}
			assert.Equal(t, drawn+1+extra, st.Calls(), "one range of the new day (and one of the old day the slow database was still in)")
		})
	}
}
