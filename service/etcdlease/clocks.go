package etcdlease

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/ctxtime"
)

// clockReport is one live node's clock report: its clock (Unix ms) when
// written, and the revision that wrote it.
type clockReport struct {
	ms  int64
	rev int64
}

// checkClocks compares this node's clock with the reports of the live
// nodes (every key under Clocks but this node's own) and refuses, with a
// *ClockSkewError, a median skew larger than MaxClockSkew.
//
// A node refreshes its report with the mark it stores after every
// renewal, so a report is at most a renew interval old, except that of a node whose renewals are failing:
// it keeps its lease, and its report, until etcd expires it, up to TTL
// later. So when the first read shows too much skew, the reports are read
// again a renew interval later and only those rewritten meanwhile are
// judged (with the time between the reads as their age).
func (l *Lease) checkClocks(ctx context.Context) error {
	sent := l.now()
	first, err := l.readClocks(ctx)
	if err != nil {
		return err
	}
	now := l.now()
	skew := medianSkew(now, reportValues(first), RenewInterval(l.o.TTL)+time.Duration(now-sent)+time.Millisecond)
	if len(first) == 0 || skew.Abs() <= l.o.MaxClockSkew {
		l.o.Logger.Debug("etcdlease: clock in line with the live nodes", "nodes", len(first), "skew", skew)
		return nil
	}
	// A healthy node rewrites its report every renew interval plus two
	// round trips to etcd (the renewal, the report): allow for those,
	// judged by how long our own read took.
	slack := max(retryInterval/5, 4*time.Duration(now-sent))
	if err := ctxtime.Sleep(ctx, RenewInterval(l.o.TTL)+slack); err != nil {
		return err
	}
	second, err := l.readClocks(ctx)
	if err != nil {
		return err
	}
	now = l.now()
	var fresh []int64
	for key, r := range second {
		if old, ok := first[key]; !ok || r.rev > old.rev {
			fresh = append(fresh, r.ms)
		}
	}
	if len(fresh) == 0 {
		l.o.Logger.Warn("etcdlease: no live node refreshed its clock report within a renew interval; starting without the clock check",
			"reports", len(second), "skewOfTheStaleReports", skew)
		return nil
	}
	skew = medianSkew(now, fresh, time.Duration(now-sent)+time.Millisecond)
	if skew.Abs() > l.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Nodes: len(fresh), Bound: l.o.MaxClockSkew, Where: l.keys.Clocks()}
	}
	l.o.Logger.Debug("etcdlease: clock in line with the live nodes", "nodes", len(fresh), "skew", skew)
	return nil
}

// clockSample is how many of the latest clock reports a start reads.
const clockSample = 63

// readClocks reads the other nodes' clock reports, by key.
func (l *Lease) readClocks(ctx context.Context) (map[string]clockReport, error) {
	gctx, cancel := l.timeout(ctx)
	// The most recent reports are enough for a median, and a fleet of
	// thousands then costs each start a bounded read.
	resp, err := l.cli.Get(gctx, l.keys.Clocks(), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(clockSample))
	cancel()
	if err != nil {
		return nil, l.unavailable(gctx, "reading the clock reports", err)
	}
	own := l.keys.Clock(l.o.NodeName)
	reports := make(map[string]clockReport, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if string(kv.Key) == own {
			l.o.Logger.Warn("etcdlease: a live lease reports a clock under this node's name (an earlier run of it, or another node: give every node its own nodeName)",
				"key", own)
			continue
		}
		ms, err := strconv.ParseInt(strings.TrimSpace(string(kv.Value)), 10, 64)
		if err != nil || ms <= 0 || ms > maxReportMs { // out of range would overflow the skew arithmetic
			l.o.Logger.Warn("etcdlease: ignoring a malformed clock report", "key", string(kv.Key), "value", string(kv.Value))
			continue
		}
		reports[string(kv.Key)] = clockReport{ms: ms, rev: kv.ModRevision}
	}
	return reports, nil
}

// maxReportMs is the largest clock report taken (Unix ms): in nanoseconds,
// with a report's age added, it still fits an int64 (about year 2262).
const maxReportMs = (math.MaxInt64 - int64(MaxTTL) - int64(MaxMaxClockSkew)) / int64(time.Millisecond)

func reportValues(m map[string]clockReport) []int64 {
	v := make([]int64, 0, len(m))
	for _, r := range m {
		v = append(v, r.ms)
	}
	return v
}

// medianSkew is the median, over the reports (Unix ms), of how far now
// (Unix ns) lies outside [report, report+maxAge]: negative when behind,
// 0 when within. With an even count it is the mean of the middle two.
// No reports: 0.
func medianSkew(now int64, reportsMs []int64, maxAge time.Duration) time.Duration {
	if len(reportsMs) == 0 {
		return 0
	}
	skews := make([]time.Duration, len(reportsMs))
	for i, ms := range reportsMs {
		lo := ms * int64(time.Millisecond)
		hi := lo + int64(maxAge)
		switch {
		case now < lo:
			skews[i] = time.Duration(now - lo)
		case now > hi:
			skews[i] = time.Duration(now - hi)
		}
	}
	slices.Sort(skews)
	n := len(skews)
	if n%2 == 1 {
		return skews[n/2]
	}
	return (skews[n/2-1] + skews[n/2]) / 2
}
