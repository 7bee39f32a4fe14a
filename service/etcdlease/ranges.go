package etcdlease

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
)

// Range is a span of machine ids, First..Last inclusive.
type Range struct{ First, Last int64 }

// FullRange is every machine id.
var FullRange = Range{0, intf.MaxMachine}

func (r Range) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Size is the number of ids in r.
func (r Range) Size() int64 { return r.Last - r.First + 1 }

// Contains tells whether id lies in r.
func (r Range) Contains(id int64) bool { return id >= r.First && id <= r.Last }

// Overlaps tells whether r and o share an id.
func (r Range) Overlaps(o Range) bool { return r.First <= o.Last && o.First <= r.Last }

func (r Range) valid() bool { return r.First >= 0 && r.First <= r.Last && r.Last <= intf.MaxMachine }

// ParseRange reads "first-last" (e.g. "0-511") or a single id.
func ParseRange(s string) (Range, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		hi = lo
	}
	first, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
	last, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
	r := Range{first, last}
	if err1 != nil || err2 != nil || !r.valid() {
		return Range{}, fmt.Errorf("%w: machine range %q: want first-last within 0-%d, first <= last (e.g. 0-511)", intf.ErrInvalidArgument, s, intf.MaxMachine)
	}
	return r, nil
}

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
func (l *Lease) rangeOp(s *session) []clientv3.Op {
	if l.o.MachineRange == nil {
		return nil
	}
	v, _ := json.Marshal(rangeEntry{Prefix: l.o.Prefix, Range: l.o.MachineRange.String()})
	return []clientv3.Op{clientv3.OpPut(rangeKey(s.lease), string(v), clientv3.WithLease(s.lease))}
}

// checkRanges refuses, with a *RangeOverlapError, a range that overlaps
// the range of another prefix registered before ours (a lower create
// revision): of two fleets started at once with overlapping ranges, the
// later one refuses, whichever order they read in.
func (l *Lease) checkRanges(ctx context.Context, s *session) error {
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
		if string(kv.Key) == rangeKey(s.lease) {
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
