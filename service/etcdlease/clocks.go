package etcdlease

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service"
)

// checkClocks compares this node's clock with the reports of the live
// nodes (every key under Clocks but this node's own) and refuses, with a
// *ClockSkewError, a median skew larger than MaxClockSkew.
func (l *Lease) checkClocks(ctx context.Context, h service.LeaseHolder, s *session) error {
	gctx, cancel := l.timeout(ctx)
	sent := h.Now()
	resp, err := l.cli.Get(gctx, l.keys.Clocks(), clientv3.WithPrefix())
	cancel()
	if err != nil {
		return l.unavailable(gctx, "reading the clock reports", err)
	}
	now := h.Now()
	own := l.keys.Clock(l.o.NodeName)
	var reports []int64
	for _, kv := range resp.Kvs {
		if string(kv.Key) == own {
			if kv.Lease != int64(s.lease) {
				l.o.Logger.Warn("etcdlease: another lease reports a clock under this node's name: give every node its own nodeName",
					"key", own)
			}
			continue
		}
		ms, err := strconv.ParseInt(strings.TrimSpace(string(kv.Value)), 10, 64)
		if err != nil {
			l.o.Logger.Warn("etcdlease: ignoring a malformed clock report", "key", string(kv.Key), "value", string(kv.Value))
			continue
		}
		reports = append(reports, ms)
	}
	if len(reports) == 0 {
		return nil
	}
	// A report is refreshed every RenewInterval, and our read took
	// now−sent: a live node's clock now lies within [report, report+age].
	maxAge := RenewInterval(l.o.TTL) + time.Duration(now-sent) + time.Millisecond
	skew := medianSkew(now, reports, maxAge)
	if skew > l.o.MaxClockSkew || -skew > l.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Nodes: len(reports), Bound: l.o.MaxClockSkew, Where: l.keys.Clocks()}
	}
	l.o.Logger.Debug("etcdlease: clock in line with the live nodes", "nodes", len(reports), "skew", skew)
	return nil
}

// medianSkew is the median, over the reports (Unix ms), of how far now
// (Unix ns) lies outside [report, report+maxAge]: negative when behind,
// 0 when within. With an even count it is the mean of the middle two.
func medianSkew(now int64, reportsMs []int64, maxAge time.Duration) time.Duration {
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
