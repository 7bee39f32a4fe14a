package clockskew

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestMedian(t *testing.T) {
	const sec = int64(time.Second)
	now := 1_800_000_000 * sec
	ms := func(d time.Duration) int64 { return (now + int64(d)) / int64(time.Millisecond) }
	for _, tc := range []struct {
		name    string
		reports []int64
		want    time.Duration
	}{
		{"within a report's age", []int64{ms(-500 * time.Millisecond)}, 0},
		{"ahead of a fresh report", []int64{ms(-3 * time.Second)}, 2 * time.Second},
		{"behind a report", []int64{ms(2 * time.Second)}, -2 * time.Second},
		{"one outlier does not count", []int64{ms(0), ms(-100 * time.Millisecond), ms(time.Hour)}, 0},
		{"even count: mean of the middle two", []int64{ms(2 * time.Second), ms(4 * time.Second)}, -3 * time.Second},
		{"none", nil, 0},
	} {
		var reports []Report
		for _, ms := range tc.reports {
			reports = append(reports, Report{Ms: ms})
		}
		assert.Equal(t, tc.want, Median(now, reports, time.Second), tc.name)
	}
}

// The largest report taken leaves room for its age in nanoseconds: the skew
// arithmetic cannot overflow.
func TestMaxReportFitsTheSkewArithmetic(t *testing.T) {
	hi := MaxReportMs*int64(time.Millisecond) + int64(2*time.Hour)
	assert.Greater(t, hi, MaxReportMs*int64(time.Millisecond), "no overflow")
	assert.Less(t, int64(MaxReportMs), int64(math.MaxInt64/int64(time.Millisecond)))
	now := int64(1_800_000_000) * int64(time.Second)
	assert.Less(t, Median(now, []Report{{Ms: MaxReportMs}}, time.Hour), time.Duration(0), "a report far ahead reads as this clock behind")
}

// A fleet whose live nodes report a clock 5 s ahead refuses this one; a
// stale report (not rewritten within the interval) refuses nobody.
func TestFleetCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := func() int64 { return time.Now().UnixNano() }
		ahead := func(rev int64) map[string]Report {
			return map[string]Report{"/p/clocks/b": {Ms: time.Now().Add(5 * time.Second).UnixMilli(), Rev: rev}}
		}
		reads := 0
		f := Fleet{Now: now, Interval: 2 * time.Second, Bound: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Provider: "test", Where: "reports under /p/clocks/"}
		f.Read = func(context.Context) (map[string]Report, error) { reads++; return ahead(int64(reads)), nil }
		err := f.Check(t.Context())
		var se *Error
		require.True(t, errors.As(err, &se), "%v", err)
		assert.ErrorIs(t, err, intf.ErrClockBehind)
		assert.Equal(t, 1, se.Nodes)
		assert.Contains(t, err.Error(), "test: this node's clock is at least 5s behind the median of 1 live node(s) (reports under /p/clocks/)")

		f.Read = func(context.Context) (map[string]Report, error) { return ahead(1), nil }
		assert.NoError(t, f.Check(t.Context()), "a stale report: no live node to compare with")

		f.Read = func(context.Context) (map[string]Report, error) { return nil, nil }
		assert.NoError(t, f.Check(t.Context()), "the first node")
	})
}
