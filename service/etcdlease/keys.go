package etcdlease

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Keys is the layout of the keys under a prefix (see the package comment).
type Keys struct{ Prefix string }

func (k Keys) Machines() string              { return k.Prefix + "/machines/" }                            // the machine keys
func (k Keys) Machine(id int64) string       { return k.Machines() + strconv.FormatInt(id, 10) }           // id's key, under its holder's lease
func (k Keys) Marks() string                 { return k.Prefix + "/marks/" }                               // the time high-water marks
func (k Keys) Mark(id int64) string          { return k.Marks() + strconv.FormatInt(id, 10) }              // id's mark (Unix ms), no lease
func (k Keys) Claimed(id int64) string       { return k.Prefix + "/claimed/" + strconv.FormatInt(id, 10) } // id was held (no lease)
func (k Keys) Clocks() string                { return k.Prefix + "/clocks/" }                              // the nodes' clock reports
func (k Keys) Clock(node string) string      { return k.Clocks() + node }                                  // node's clock (Unix ms)
func rangeKey(lease clientv3.LeaseID) string { return RangesKey + strconv.FormatInt(int64(lease), 16) }

// machineOf parses a key under Machines; ok is false for anything else.
func (k Keys) machineOf(key string) (id int64, ok bool) {
	s, found := strings.CutPrefix(key, k.Machines())
	id, err := strconv.ParseInt(s, 10, 64)
	return id, found && err == nil && id >= 0 && id <= intf.MaxMachine && strconv.FormatInt(id, 10) == s
}

type mvccKV = mvccpb.KeyValue

// Range is a span of machine ids, First..Last inclusive.
type Range = leasekit.Range

// FullRange is every machine id.
var FullRange = leasekit.FullRange

// ParseRange reads "first-last" (e.g. "0-511") or a single id.
func ParseRange(s string) (Range, error) { return leasekit.ParseRange(s) }

// RangesKey is the directory, outside every prefix, where the fleets of
// one etcd cluster that set a machine range register it, one key per node
// under its lease: a fleet's range is registered while one of its nodes
// lives.
const RangesKey = "/vesta-ranges/"

type rangeEntry struct{ Prefix, Range string }

// rangeOp registers this node's range under its lease, in the claim's
// transaction (nil without a range).
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
	defer cancel()
	resp, err := l.cli.Get(gctx, RangesKey, clientv3.WithPrefix())
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
		if r, err := ParseRange(e.Range); err == nil && r.Overlaps(*l.o.MachineRange) && (ours == 0 || kv.CreateRevision < ours) {
			return &RangeOverlapError{Prefix: l.o.Prefix, Range: *l.o.MachineRange, OtherPrefix: e.Prefix, OtherRange: r}
		}
	}
	return nil
}
