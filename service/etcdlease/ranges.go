package etcdlease

import (
	"context"
	"encoding/json"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Range is a span of machine ids, First..Last inclusive.
type Range = leasekit.Range

// FullRange is every machine id.
var FullRange = leasekit.FullRange

// ParseRange reads "first-last" (e.g. "0-511") or a single id.
func ParseRange(s string) (Range, error) { return leasekit.ParseRange(s) }

// RangesKey is the directory, outside every prefix, where the fleets of
// one etcd cluster that set a machine range register it: each node puts
// one key under its own lease, so a fleet's range is registered while one
// of its nodes lives.
const RangesKey = "/vesta-ranges/"

// rangeEntry is the value of a node's key under RangesKey.
type rangeEntry struct {
	Prefix string `json:"prefix"`
	Range  string `json:"range"`
}

// rangeKey is this node's key under RangesKey.
func rangeKey(lease clientv3.LeaseID) string { return RangesKey + strconv.FormatInt(int64(lease), 16) }

// rangeOp registers this node's range under its lease (nil without a
// range): it goes into the claim transaction.
func (l *Lease) rangeOp(lease clientv3.LeaseID) []clientv3.Op {
	if l.o.MachineRange == nil {
		return nil
	}
	v, _ := json.Marshal(rangeEntry{Prefix: l.o.Prefix, Range: l.o.MachineRange.String()})
	return []clientv3.Op{clientv3.OpPut(rangeKey(lease), string(v), clientv3.WithLease(lease))}
}

// checkRanges refuses, with a *RangeOverlapError, a range that overlaps
// the range of another prefix registered before ours (a lower create
// revision): of two fleets started at once with overlapping ranges, the
// later one refuses, whichever order they read in.
func (l *Lease) checkRanges(ctx context.Context, lease clientv3.LeaseID) error {
	if l.o.MachineRange == nil {
		return nil
	}
	gctx, cancel := l.timeout(ctx)
	resp, err := l.cli.Get(gctx, RangesKey, clientv3.WithPrefix())
	cancel()
	if err != nil {
		return l.unavailable(gctx, "reading the machine ranges of the fleets", err)
	}
	var ours int64
	for _, kv := range resp.Kvs {
		if string(kv.Key) == rangeKey(lease) {
			ours = kv.CreateRevision
		}
	}
	for _, kv := range resp.Kvs {
		var e rangeEntry
		if json.Unmarshal(kv.Value, &e) != nil || e.Prefix == l.o.Prefix {
			continue
		}
		r, err := ParseRange(e.Range)
		if err != nil || !r.Overlaps(*l.o.MachineRange) {
			continue
		}
		if ours == 0 || kv.CreateRevision < ours {
			return &RangeOverlapError{Prefix: l.o.Prefix, Range: *l.o.MachineRange, OtherPrefix: e.Prefix, OtherRange: r}
		}
	}
	return nil
}
