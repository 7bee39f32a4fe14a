package etcdlease

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/internal/clockskew"
	"github.com/vesta-go/vesta/service/backend/internal/leasekit"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/machineid"
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

// RangesKey is the directory, outside every prefix, where each node registers its
// fleet's machine range under its lease (NoRange: a fleet without one).
const RangesKey = "/vesta-ranges/"

type rangeEntry struct {
	Prefix, Range string
	NoRange       bool `json:",omitempty"` // no machineRange: any id
}

// ownRange is the ids this node may claim.
func (b *backend) ownRange() Range { return *cmp.Or(b.o.MachineRange, &FullRange) }

// rangeOp registers this node's range in the claim's transaction.
func (b *backend) rangeOp(lease clientv3.LeaseID) []clientv3.Op {
	v, _ := json.Marshal(rangeEntry{Prefix: b.o.Prefix, Range: b.ownRange().String(), NoRange: b.o.MachineRange == nil})
	return []clientv3.Op{clientv3.OpPut(rangeKey(lease), string(v), clientv3.WithLease(lease))}
}

// checkRanges refuses a range overlapping another prefix's registered first (a
// lower create revision). A fleet without a range overlaps every range; fleets
// that all lack one are apart (their prefixes are their id spaces).
func (b *backend) checkRanges(ctx context.Context, lease clientv3.LeaseID) error {
	resp, err := b.cli.Get(ctx, RangesKey, clientv3.WithPrefix())
	if err != nil {
		return b.unavailable(ctx, "reading the machine ranges of the fleets", err)
	}
	var ours int64
	for _, kv := range resp.Kvs {
		if string(kv.Key) == rangeKey(lease) {
			ours = kv.CreateRevision
		}
	}
	mine, noRange := b.ownRange(), b.o.MachineRange == nil
	for _, kv := range resp.Kvs {
		var e rangeEntry
		if json.Unmarshal(kv.Value, &e) != nil || e.Prefix == b.o.Prefix || (noRange && e.NoRange) {
			continue
		}
		if r, err := machineid.ParseRange(e.Range); err == nil && r.Overlaps(mine) && (ours == 0 || kv.CreateRevision < ours) {
			return &RangeOverlapError{Prefix: b.o.Prefix, Range: mine, OtherPrefix: e.Prefix, OtherRange: r, NoRange: noRange, OtherNoRange: e.NoRange}
		}
	}
	return nil
}

// RangeOverlapError: this fleet's machine range overlaps another prefix's in the
// same etcd, registered first (intf.ErrInvalidArgument).
type RangeOverlapError struct {
	Prefix, OtherPrefix   string
	Range, OtherRange     Range
	NoRange, OtherNoRange bool // the fleet has no machineRange: Range is every id
}

func (e *RangeOverlapError) Error() string {
	side := func(prefix string, r Range, none bool) string {
		if none {
			return "prefix " + prefix + " (no machineRange: any machine id, " + r.String() + ")"
		}
		return "prefix " + prefix + " (machineRange " + r.String() + ")"
	}
	return fmt.Sprintf("etcdlease: %s overlaps %s, registered first in the same etcd cluster: the fleets of one etcd must split the machine ids by disjoint ranges, "+
		"or one would hand out an id another holds; give this fleet a range disjoint from the others' (machineRange, --machine-range, VESTA_MACHINE_RANGE), or its own etcd",
		side(e.Prefix, e.Range, e.NoRange), side(e.OtherPrefix, e.OtherRange, e.OtherNoRange))
}

func (e *RangeOverlapError) Is(target error) bool { return target == intf.ErrInvalidArgument }

// backend is the Lease as a leasekit.Backend (a StoreMark unlike the engine's).
type backend Lease

// Open dials unless the caller gave a client; gRPC reconnects at most
// RetryInterval apart.
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
	g, err := b.cli.Grant(ctx, int64(b.o.TTL/time.Second))
	if err != nil {
		return 0, 0, b.unavailable(ctx, "granting a lease", err)
	}
	return int64(g.ID), time.Duration(g.TTL) * time.Second, nil
}

// TryClaim creates id's key under the lease if absent, reading its mark, noting
// it claimed, reporting the clock and range; else it lists the ids held.
func (b *backend) TryClaim(ctx context.Context, token, id int64) (leasekit.Claimed, error) {
	lease, key := clientv3.LeaseID(token), b.keys.Machine(id)
	resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(append([]clientv3.Op{clientv3.OpPut(key, b.o.NodeName, clientv3.WithLease(lease)), clientv3.OpGet(b.keys.Mark(id)),
			clientv3.OpGet(b.keys.Claimed(id)), clientv3.OpPut(b.keys.Claimed(id), b.o.NodeName), b.clockOp(lease)},
			b.rangeOp(lease)...)...).
		Else(clientv3.OpGet(b.keys.Machines(), clientv3.WithPrefix(), clientv3.WithKeysOnly())).Commit()
	if err != nil {
		return leasekit.Claimed{}, b.unavailable(ctx, "claiming machine "+strconv.FormatInt(id, 10), err)
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

// Renew uses KeepAliveOnce, which writes no revision.
func (b *backend) Renew(ctx context.Context, c leasekit.Claim) (time.Duration, error) {
	resp, err := b.cli.KeepAliveOnce(ctx, clientv3.LeaseID(c.Token))
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return 0, fmt.Errorf("etcd says the lease is gone (expired or revoked): %w", ErrNotHeld)
	case err != nil:
		return 0, b.unavailable(ctx, "renewing the lease", err)
	case c.Cluster != 0 && resp.ClusterId != c.Cluster:
		return 0, fmt.Errorf("the lease is of another etcd cluster: %w", ErrNotHeld)
	}
	return time.Duration(resp.TTL) * time.Second, nil
}

// Held is read-only, so it works under etcd's NOSPACE alarm too.
func (b *backend) Held(ctx context.Context, c leasekit.Claim) (int64, error) {
	key := b.keys.Machine(c.Machine)
	resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", clientv3.LeaseID(c.Token))).
		Then(clientv3.OpGet(b.keys.Mark(c.Machine))).Commit()
	if err != nil {
		return 0, b.unavailable(ctx, "checking the key of machine "+strconv.FormatInt(c.Machine, 10), err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("the key %s is gone or belongs to another lease: %w", key, ErrNotHeld)
	}
	return b.parseMark(c.Machine, resp.Responses[0].GetResponseRange().GetKvs())
}

// StoreMark also refreshes this node's clock report and the key's node name (a
// resumed run may have another): one revision.
func (b *backend) StoreMark(ctx context.Context, c leasekit.Claim, ms int64) error {
	lease, key := clientv3.LeaseID(c.Token), b.keys.Machine(c.Machine)
	resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", lease)).Then(
		clientv3.OpPut(b.keys.Mark(c.Machine), strconv.FormatInt(ms, 10)), b.clockOp(lease),
		clientv3.OpPut(key, b.o.NodeName, clientv3.WithLease(lease))).Commit()
	b.health.NoteNoSpace(errors.Is(err, rpctypes.ErrNoSpace) || (err != nil && b.health.NoSpace()), c.Machine)
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

func (b *backend) Renewed(ctx context.Context, c leasekit.Claim) {
	b.health.WatchHistory(ctx, b.cli, b.keys.Machine(c.Machine), b.now())
}

func (b *backend) AddStats(st *machineid.LeaseStats) {
	st.UncompactedRevisions, st.NoSpace = b.health.Uncompacted(), b.health.NoSpace()
}

func (b *backend) unavailable(ctx context.Context, doing string, err error) error {
	return outage.Error{Err: fmt.Errorf("%w: etcd %s: %s%s: %w", intf.ErrUnavailable,
		strings.Join(b.o.Endpoints, ","), doing, outage.TimedOut(ctx, err, b.o.DialTimeout), err)}
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

// CheckClock refuses a median skew from the live nodes' clock reports beyond
// MaxClockSkew (a live node rewrites its report every mark interval).
func (b *backend) CheckClock(ctx context.Context) error {
	return clockskew.Fleet{Now: b.now, Read: b.readClocks, Interval: leasekit.MarkInterval(b.o.TTL), Bound: b.o.MaxClockSkew,
		Logger: b.o.Logger, Provider: "etcdlease", Where: "reports under " + b.keys.Clocks()}.Check(ctx)
}

// readClocks reads the other nodes' latest 63 clock reports, by key, bounded
// alone: CheckClock sleeps a mark interval between its reads.
func (b *backend) readClocks(ctx context.Context) (map[string]clockskew.Report, error) {
	gctx, cancel := outage.Bound(ctx, b.o.DialTimeout)
	defer cancel()
	resp, err := b.cli.Get(gctx, b.keys.Clocks(), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(63))
	if err != nil {
		return nil, b.unavailable(gctx, "reading the clock reports", err)
	}
	own := b.keys.Clock(b.o.NodeName)
	reports := make(map[string]clockskew.Report, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		ms, err := strconv.ParseInt(strings.TrimSpace(string(kv.Value)), 10, 64)
		switch {
		case string(kv.Key) == own:
			b.o.Logger.Warn("etcdlease: a live lease reports a clock under this node's name (an earlier run of it, or another node: give every node its own nodeName)", "key", own)
		case err != nil || ms <= 0 || ms > clockskew.MaxReportMs: // out of range would overflow the skew arithmetic
			b.o.Logger.Warn("etcdlease: ignoring a malformed clock report", "key", string(kv.Key), "value", string(kv.Value))
		default:
			reports[string(kv.Key)] = clockskew.Report{Ms: ms, Rev: kv.ModRevision}
		}
	}
	return reports, nil
}
