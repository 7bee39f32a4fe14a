// Package clockskew compares this node's clock with another before a
// machine id is claimed: a coordinator's (PostgreSQL's clock) or the median
// of a fleet's live nodes (their reports in etcd). A clock off by more than
// the bound claims nothing: its IDs would sort out of line with the fleet's.
package clockskew

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// Skew is how far lo..hi lies outside otherLo..otherHi: negative when behind, 0 if they meet.
func Skew(lo, hi, otherLo, otherHi int64) time.Duration {
	if hi < otherLo {
		return time.Duration(hi - otherLo)
	}
	return time.Duration(max(lo-otherHi, 0))
}

// Error is the lease's ClockSkewError: this clock is off the other's by
// more than Bound.
type Error = lease.ClockSkewError

// Report is a live node's clock report: Unix ms, and a revision that grows
// with every rewrite.
type Report struct{ Ms, Rev int64 }

// MaxReportMs is the largest report taken (Unix ms): in ns, with an age of up
// to two hours added (a TTL and a bound, at most an hour each), it fits an int64.
const MaxReportMs = (math.MaxInt64 - int64(2*time.Hour)) / int64(time.Millisecond)

// Median is the median Skew of now from [report, report+maxAge] (0 without).
func Median(now int64, reports []Report, maxAge time.Duration) time.Duration {
	if len(reports) == 0 {
		return 0
	}
	skews := make([]time.Duration, len(reports))
	for i, r := range reports {
		lo := r.Ms * int64(time.Millisecond)
		skews[i] = Skew(now, now, lo, lo+int64(maxAge))
	}
	slices.Sort(skews)
	if n := len(skews); n%2 == 0 {
		return skews[n/2-1]/2 + skews[n/2]/2
	}
	return skews[len(skews)/2]
}

// Fleet checks this clock against the reports of a fleet's live nodes.
type Fleet struct {
	Now      func() int64                                         // this clock, Unix ns
	Read     func(ctx context.Context) (map[string]Report, error) // the live nodes' latest reports, by key
	Interval time.Duration                                        // the longest a live node goes between two reports
	Bound    time.Duration                                        // MaxClockSkew
	Logger   *slog.Logger
	Provider string // "etcdlease"
	Where    string // "reports under /vesta/clocks/"
}

// Check refuses a median skew beyond Bound; one too large is judged again on
// the reports rewritten within an Interval, so that a dead node's stale report
// refuses nobody.
func (f Fleet) Check(ctx context.Context) error {
	sent := f.Now()
	first, err := f.Read(ctx)
	if err != nil {
		return err
	}
	now := f.Now()
	skew := Median(now, slices.Collect(maps.Values(first)), f.Interval+time.Duration(now-sent)+time.Millisecond)
	if len(first) == 0 || skew.Abs() <= f.Bound {
		return nil
	}
	if err := ctxtime.Sleep(ctx, f.Interval+max(100*time.Millisecond, 4*time.Duration(now-sent))); err != nil {
		return err
	}
	second, err := f.Read(ctx)
	if err != nil {
		return err
	}
	var fresh []Report
	for key, r := range second {
		if old, ok := first[key]; !ok || r.Rev > old.Rev {
			fresh = append(fresh, r)
		}
	}
	if len(fresh) == 0 {
		f.Logger.Warn(f.Provider+": no live node refreshed its clock report within a mark interval; starting without the clock check",
			"reports", len(second), "skewOfTheStaleReports", skew)
		return nil
	}
	now = f.Now()
	if skew = Median(now, fresh, time.Duration(now-sent)+time.Millisecond); skew.Abs() > f.Bound {
		return &Error{Skew: skew, Nodes: len(fresh), Bound: f.Bound, Provider: f.Provider,
			Against: "the median of " + strconv.Itoa(len(fresh)) + " live node(s) (" + f.Where + ")"}
	}
	return nil
}
