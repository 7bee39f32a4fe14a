package etcdlease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/internal/leasekit"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
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

// ParseRange reads "first-last" (e.g. "0-511") or a single id.
func ParseRange(s string) (Range, error) { return leasekit.ParseRange(s) }

// RangesKey is the directory, outside every prefix, where the nodes of a
// fleet with a machine range register it, each under its lease.
const RangesKey = "/vesta-ranges/"

type rangeEntry struct{ Prefix, Range string }

// rangeOp registers this node's range in the claim's transaction.
func (b *backend) rangeOp(lease clientv3.LeaseID) []clientv3.Op {
	if b.o.MachineRange == nil {
		return nil
	}
	v, _ := json.Marshal(rangeEntry{Prefix: b.o.Prefix, Range: b.o.MachineRange.String()})
	return []clientv3.Op{clientv3.OpPut(rangeKey(lease), string(v), clientv3.WithLease(lease))}
}

// checkRanges refuses a range overlapping another prefix's registered first
// (a lower create revision): of two fleets started at once, the later refuses.
func (b *backend) checkRanges(ctx context.Context, lease clientv3.LeaseID) error {
	if b.o.MachineRange == nil {
		return nil
	}
	gctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	resp, err := b.cli.Get(gctx, RangesKey, clientv3.WithPrefix())
	if err != nil {
		return b.unavailable(gctx, "reading the machine ranges of the fleets", err)
	}
	var ours int64
	for _, kv := range resp.Kvs {
		if string(kv.Key) == rangeKey(lease) {
			ours = kv.CreateRevision
		}
	}
	for _, kv := range resp.Kvs {
		var e rangeEntry
		if json.Unmarshal(kv.Value, &e) != nil || e.Prefix == b.o.Prefix {
			continue
		}
		if r, err := ParseRange(e.Range); err == nil && r.Overlaps(*b.o.MachineRange) && (ours == 0 || kv.CreateRevision < ours) {
			return &RangeOverlapError{Prefix: b.o.Prefix, Range: *b.o.MachineRange, OtherPrefix: e.Prefix, OtherRange: r}
		}
	}
	return nil
}

// RangeOverlapError: this fleet's machine range overlaps that of another
// prefix in the same etcd cluster, registered first, so the two could hand
// out one id twice. It matches intf.ErrInvalidArgument.
type RangeOverlapError struct {
	Prefix, OtherPrefix string
	Range, OtherRange   Range
}

func (e *RangeOverlapError) Error() string {
	return fmt.Sprintf("etcdlease: machineRange %s of prefix %s overlaps machineRange %s of prefix %s, live in the same etcd cluster: give the fleets disjoint ranges",
		e.Range, e.Prefix, e.OtherRange, e.OtherPrefix)
}

func (e *RangeOverlapError) Is(target error) bool { return target == intf.ErrInvalidArgument }

// backend is the Lease as a leasekit.Backend (a StoreMark unlike the engine's).
type backend Lease

// Open dials unless the caller gave a client. gRPC reconnects at most
// RetryInterval apart, so renewals resume soon after an outage ends.
func (b *backend) Open(_ context.Context, now func() int64) (err error) {
	if b.now, b.cli = now, b.given; b.cli != nil {
		return nil
	}
	b.cli, err = clientv3.New(clientv3.Config{
		Endpoints: b.o.Endpoints, DialTimeout: b.o.DialTimeout, TLS: b.tls, Username: b.o.Username, Password: b.o.Password,
		Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: leasekit.RetryInterval},
			MinConnectTimeout: b.o.DialTimeout,
		})},
	})
	if err != nil {
		return b.unavailable(context.Background(), "connecting", err)
	}
	return nil
}

func (b *backend) Close() {
	if b.given == nil && b.cli != nil {
		_ = b.cli.Close()
	}
}

func (b *backend) NewToken(ctx context.Context) (int64, time.Duration, error) {
	gctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	g, err := b.cli.Grant(gctx, int64(b.o.TTL/time.Second))
	if err != nil {
		return 0, 0, b.unavailable(gctx, "granting a lease", err)
	}
	return int64(g.ID), time.Duration(g.TTL) * time.Second, nil
}

// TryClaim creates id's key under the lease if absent, reading its mark,
// noting it as held and reporting this node's clock and range; else it lists
// the ids held: one round trip.
func (b *backend) TryClaim(ctx context.Context, token, id int64) (leasekit.Claimed, error) {
	tctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	lease, key := clientv3.LeaseID(token), b.keys.Machine(id)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(append([]clientv3.Op{clientv3.OpPut(key, b.o.NodeName, clientv3.WithLease(lease)), clientv3.OpGet(b.keys.Mark(id)),
			clientv3.OpGet(b.keys.Claimed(id)), clientv3.OpPut(b.keys.Claimed(id), b.o.NodeName), b.clockOp(lease)},
			b.rangeOp(lease)...)...).
		Else(clientv3.OpGet(b.keys.Machines(), clientv3.WithPrefix(), clientv3.WithKeysOnly())).Commit()
	if err != nil {
		return leasekit.Claimed{}, b.unavailable(tctx, "claiming machine "+strconv.FormatInt(id, 10), err)
	}
	c := leasekit.Claimed{OK: resp.Succeeded, Cluster: resp.Header.ClusterId}
	if !c.OK {
		c.Taken = map[int64]bool{id: true}
		for _, kv := range resp.Responses[0].GetResponseRange().GetKvs() {
			if h, ok := b.keys.machineOf(string(kv.Key)); ok {
				c.Taken[h] = true
			}
		}
		return c, nil
	}
	marks := resp.Responses[1].GetResponseRange().GetKvs()
	if c.Mark, err = b.parseMark(id, marks); err != nil {
		return c, err
	}
	// claimed/<id> (never deleted by us) without a mark: the mark was lost.
	c.MarkLost = len(marks) == 0 && len(resp.Responses[2].GetResponseRange().GetKvs()) > 0
	return c, b.checkRanges(ctx, lease)
}

// Renew uses KeepAliveOnce, which writes nothing to etcd's history (the
// client's background keep-alive is not trusted for fencing).
func (b *backend) Renew(ctx context.Context, c leasekit.Claim) (time.Duration, error) {
	rctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	resp, err := b.cli.KeepAliveOnce(rctx, clientv3.LeaseID(c.Token))
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return 0, fmt.Errorf("etcd says the lease is gone (expired or revoked): %w", ErrNotHeld)
	case err != nil:
		return 0, b.unavailable(rctx, "renewing the lease", err)
	case c.Cluster != 0 && resp.ClusterId != c.Cluster:
		return 0, fmt.Errorf("the lease is of another etcd cluster: %w", ErrNotHeld)
	}
	return time.Duration(resp.TTL) * time.Second, nil
}

// Held is read-only, so it works under etcd's NOSPACE alarm too.
func (b *backend) Held(ctx context.Context, c leasekit.Claim) (int64, error) {
	tctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	key := b.keys.Machine(c.Machine)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", clientv3.LeaseID(c.Token))).
		Then(clientv3.OpGet(b.keys.Mark(c.Machine))).Commit()
	if err != nil {
		return 0, b.unavailable(tctx, "checking the key of machine "+strconv.FormatInt(c.Machine, 10), err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("the key %s is gone or belongs to another lease: %w", key, ErrNotHeld)
	}
	return b.parseMark(c.Machine, resp.Responses[0].GetResponseRange().GetKvs())
}

// StoreMark also refreshes this node's clock report and the key's node name
// (a resumed run may have another): one revision per node per renewal.
func (b *backend) StoreMark(ctx context.Context, c leasekit.Claim, ms int64) error {
	lease, key := clientv3.LeaseID(c.Token), b.keys.Machine(c.Machine)
	resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", lease)).Then(
		clientv3.OpPut(b.keys.Mark(c.Machine), strconv.FormatInt(ms, 10)), b.clockOp(lease),
		clientv3.OpPut(key, b.o.NodeName, clientv3.WithLease(lease))).Commit()
	b.noteNoSpace(errors.Is(err, rpctypes.ErrNoSpace) || (err != nil && b.noSpace.Load()), c.Machine)
	if err != nil {
		return b.unavailable(ctx, "storing the mark of machine "+strconv.FormatInt(c.Machine, 10), err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%s is not attached to our lease: %w", key, ErrNotHeld)
	}
	return nil
}

// Release revokes the lease, which deletes its keys; the mark stays.
func (b *backend) Release(ctx context.Context, c leasekit.Claim) error {
	if _, err := b.cli.Revoke(ctx, clientv3.LeaseID(c.Token)); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return err
	}
	return nil
}

func (b *backend) Renewed(ctx context.Context, c leasekit.Claim) { b.watchHistory(ctx, c.Machine) }

func (b *backend) AddStats(st *service.LeaseStats) {
	st.UncompactedRevisions, st.NoSpace = b.uncompacted.Load(), b.noSpace.Load()
}

func (b *backend) unavailable(ctx context.Context, doing string, err error) error {
	return leasekit.UnreachableError{Err: fmt.Errorf("%w: etcd %s: %s%s: %w", intf.ErrUnavailable,
		strings.Join(b.o.Endpoints, ","), doing, leasekit.TimedOut(ctx, err, b.o.DialTimeout), err)}
}

// parseMark reads id's mark from a Get (0 when absent).
func (b *backend) parseMark(id int64, kvs []*mvccpb.KeyValue) (int64, error) {
	if len(kvs) == 0 {
		return 0, nil
	}
	v := strings.TrimSpace(string(kvs[0].Value))
	if mark, err := strconv.ParseInt(v, 10, 64); err == nil && mark >= 0 {
		return mark, nil
	}
	return 0, fmt.Errorf("etcdlease: the high-water mark %s is corrupt (%q): set it to a Unix ms time surely past the last IDs of machine %d, or delete it once the clocks are surely past them",
		b.keys.Mark(id), v, id)
}

func (b *backend) clockOp(lease clientv3.LeaseID) clientv3.Op {
	return clientv3.OpPut(b.keys.Clock(b.o.NodeName), strconv.FormatInt(b.now()/int64(time.Millisecond), 10), clientv3.WithLease(lease))
}

// noteNoSpace logs, once per episode, that etcd's quota is full, and when
// it is not, before the flag changes: whoever sees it finds the line.
func (b *backend) noteNoSpace(full bool, machine int64) {
	b.noSpaceMu.Lock()
	defer b.noSpaceMu.Unlock()
	if b.noSpace.Load() == full {
		return
	}
	if full {
		b.o.Logger.Error("etcdlease: etcd is out of space (NOSPACE alarm) and refuses writes: this node issues IDs up to the mark already stored, then stops until space is freed; compact and defragment etcd, then `etcdctl alarm disarm` (docs/operations.md)",
			"machine", machine)
	} else {
		b.o.Logger.Info("etcdlease: etcd accepts writes again (NOSPACE cleared)", "machine", machine)
	}
	b.noSpace.Store(full)
}

// watchHistory reads, at most once per historyEvery, whether the oldest
// revision seen is still readable: then etcd kept every revision since, a
// count that grows until its quota fills (NOSPACE). It warns above historyWarn.
func (b *backend) watchHistory(ctx context.Context, machine int64) {
	now := b.now()
	if last := b.histChecked.Load(); last != 0 && now-last < int64(b.historyEvery) {
		return
	}
	b.histChecked.Store(now)
	key := b.keys.Machine(machine)
	gctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	cur, err := b.cli.Get(gctx, key, clientv3.WithCountOnly())
	if err != nil {
		return
	}
	rev, oldest := cur.Header.Revision, b.histOldest.Load()
	if oldest == 0 {
		b.histOldest.Store(rev)
		return
	}
	switch _, err = b.cli.Get(gctx, key, clientv3.WithCountOnly(), clientv3.WithRev(oldest)); {
	case errors.Is(err, rpctypes.ErrCompacted): // compacted since: count again from now
		b.histOldest.Store(rev)
		b.uncompacted.Store(0)
	case err == nil:
		b.uncompacted.Store(rev - oldest)
		if rev-oldest > b.historyWarn {
			b.o.Logger.Warn("etcdlease: etcd keeps every revision: its history is not compacted, and a full quota (NOSPACE) stops every write; run etcd with --auto-compaction-mode=periodic --auto-compaction-retention=1h (see docs/operations.md)",
				"revisionsSince", oldest, "uncompacted", rev-oldest)
		}
	}
}

type clockReport struct{ ms, rev int64 }

// CheckClock refuses a median skew from the live nodes' clock reports beyond
// MaxClockSkew. A failing node's report ages up to a TTL, so a skew too large
// is judged again on the reports rewritten within a renew interval.
func (b *backend) CheckClock(ctx context.Context) error {
	sent := b.now()
	first, err := b.readClocks(ctx)
	if err != nil {
		return err
	}
	now := b.now()
	skew := medianSkew(now, slices.Collect(maps.Values(first)), RenewInterval(b.o.TTL)+time.Duration(now-sent)+time.Millisecond)
	if len(first) == 0 || skew.Abs() <= b.o.MaxClockSkew {
		return nil
	}
	// A healthy node rewrites its report every renew interval plus two round
	// trips, judged by how long our own read took.
	if err := ctxtime.Sleep(ctx, RenewInterval(b.o.TTL)+max(leasekit.RetryInterval/5, 4*time.Duration(now-sent))); err != nil {
		return err
	}
	second, err := b.readClocks(ctx)
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
		b.o.Logger.Warn("etcdlease: no live node refreshed its clock report within a renew interval; starting without the clock check",
			"reports", len(second), "skewOfTheStaleReports", skew)
		return nil
	}
	now = b.now()
	if skew = medianSkew(now, fresh, time.Duration(now-sent)+time.Millisecond); skew.Abs() > b.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Nodes: len(fresh), Bound: b.o.MaxClockSkew, Provider: "etcdlease",
			Against: "the median of " + strconv.Itoa(len(fresh)) + " live node(s) (reports under " + b.keys.Clocks() + ")"}
	}
	return nil
}

// readClocks reads the other nodes' latest 63 clock reports, by key: enough
// for a median, and a bounded read in a fleet of thousands.
func (b *backend) readClocks(ctx context.Context) (map[string]clockReport, error) {
	gctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	resp, err := b.cli.Get(gctx, b.keys.Clocks(), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(63))
	if err != nil {
		return nil, b.unavailable(gctx, "reading the clock reports", err)
	}
	own := b.keys.Clock(b.o.NodeName)
	reports := make(map[string]clockReport, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		ms, err := strconv.ParseInt(strings.TrimSpace(string(kv.Value)), 10, 64)
		switch {
		case string(kv.Key) == own:
			b.o.Logger.Warn("etcdlease: a live lease reports a clock under this node's name (an earlier run of it, or another node: give every node its own nodeName)", "key", own)
		case err != nil || ms <= 0 || ms > maxReportMs: // out of range would overflow the skew arithmetic
			b.o.Logger.Warn("etcdlease: ignoring a malformed clock report", "key", string(kv.Key), "value", string(kv.Value))
		default:
			reports[string(kv.Key)] = clockReport{ms: ms, rev: kv.ModRevision}
		}
	}
	return reports, nil
}

// maxReportMs is the largest clock report taken (Unix ms): in nanoseconds,
// with a report's age added, it still fits an int64 (about year 2262).
const maxReportMs = (math.MaxInt64 - int64(leasekit.MaxTTL) - int64(leasekit.MaxMaxClockSkew)) / int64(time.Millisecond)

// medianSkew is the median Skew of now from [report, report+maxAge] (0
// without reports).
func medianSkew(now int64, reports []clockReport, maxAge time.Duration) time.Duration {
	if len(reports) == 0 {
		return 0
	}
	skews := make([]time.Duration, len(reports))
	for i, r := range reports {
		lo := r.ms * int64(time.Millisecond)
		skews[i] = leasekit.Skew(now, now, lo, lo+int64(maxAge))
	}
	slices.Sort(skews)
	if n := len(skews); n%2 == 0 {
		return skews[n/2-1]/2 + skews[n/2]/2
	}
	return skews[len(skews)/2]
}
