package etcdlease

import (
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// clockReport is a live node's clock (Unix ms) and the revision that wrote it.
type clockReport struct{ ms, rev int64 }

// checkClocks compares this node's clock with the reports of the live
// nodes (under Clocks, each refreshed with every mark stored, so at most a
// renew interval old) and refuses, with a *ClockSkewError, a median skew
// beyond MaxClockSkew. A node whose renewals fail keeps its lease and its
// aging report up to a TTL: so when the first read shows too much skew,
// the reports are read again a renew interval later and only those
// rewritten meanwhile are judged.
func (l *Lease) checkClocks(ctx context.Context) error {
	sent := l.now()
	first, err := l.readClocks(ctx)
	if err != nil {
		return err
	}
	now := l.now()
	skew := medianSkew(now, slices.Collect(maps.Values(first)), RenewInterval(l.o.TTL)+time.Duration(now-sent)+time.Millisecond)
	if len(first) == 0 || skew.Abs() <= l.o.MaxClockSkew {
		return nil
	}
	// A healthy node rewrites its report every renew interval plus two
	// round trips (the renewal, the report): allow for those, judged by
	// how long our own read took.
	if err := ctxtime.Sleep(ctx, RenewInterval(l.o.TTL)+max(retryInterval/5, 4*time.Duration(now-sent))); err != nil {
		return err
	}
	second, err := l.readClocks(ctx)
	if err != nil {
		return err
	}
	var fresh []clockReport
	for key, r := range second {
		if old, ok := first[key]; !ok || r.rev > old.rev {
			fresh = append(fresh, r)
		}
	}
	if len(fresh) == 0 {
		l.o.Logger.Warn("etcdlease: no live node refreshed its clock report within a renew interval; starting without the clock check",
			"reports", len(second), "skewOfTheStaleReports", skew)
		return nil
	}
	now = l.now()
	if skew = medianSkew(now, fresh, time.Duration(now-sent)+time.Millisecond); skew.Abs() > l.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Nodes: len(fresh), Bound: l.o.MaxClockSkew, Provider: "etcdlease",
			Against: "the median of " + strconv.Itoa(len(fresh)) + " live node(s) (reports under " + l.keys.Clocks() + ")"}
	}
	return nil
}

// readClocks reads the other nodes' latest 63 clock reports, by key: enough
// for a median, and a fleet of thousands costs each start a bounded read.
func (l *Lease) readClocks(ctx context.Context) (map[string]clockReport, error) {
	gctx, cancel := l.timeout(ctx)
	defer cancel()
	resp, err := l.cli.Get(gctx, l.keys.Clocks(), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(63))
	if err != nil {
		return nil, l.unavailable(gctx, "reading the clock reports", err)
	}
	own := l.keys.Clock(l.o.NodeName)
	reports := make(map[string]clockReport, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		ms, err := strconv.ParseInt(strings.TrimSpace(string(kv.Value)), 10, 64)
		switch {
		case string(kv.Key) == own:
			l.o.Logger.Warn("etcdlease: a live lease reports a clock under this node's name (an earlier run of it, or another node: give every node its own nodeName)", "key", own)
		case err != nil || ms <= 0 || ms > maxReportMs: // out of range would overflow the skew arithmetic
			l.o.Logger.Warn("etcdlease: ignoring a malformed clock report", "key", string(kv.Key), "value", string(kv.Value))
		default:
			reports[string(kv.Key)] = clockReport{ms: ms, rev: kv.ModRevision}
		}
	}
	return reports, nil
}

// maxReportMs is the largest clock report taken (Unix ms): in nanoseconds,
// with a report's age added, it still fits an int64 (about year 2262).
const maxReportMs = (math.MaxInt64 - int64(leasekit.MaxTTL) - int64(leasekit.MaxMaxClockSkew)) / int64(time.Millisecond)

// medianSkew is the median, over the reports, of how far now (Unix ns)
// lies outside [report, report+maxAge]: negative when behind, 0 within.
// With an even count it is the mean of the middle two; no reports: 0.
func medianSkew(now int64, reports []clockReport, maxAge time.Duration) time.Duration {
	if len(reports) == 0 {
		return 0
	}
	skews := make([]time.Duration, len(reports))
	for i, r := range reports {
		if lo := r.ms * int64(time.Millisecond); now < lo {
			skews[i] = time.Duration(now - lo)
		} else if hi := lo + int64(maxAge); now > hi {
			skews[i] = time.Duration(now - hi)
		}
	}
	slices.Sort(skews)
	if n := len(skews); n%2 == 0 {
		return skews[n/2-1]/2 + skews[n/2]/2
	}
	return skews[len(skews)/2]
}
