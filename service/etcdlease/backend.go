package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// backend is the Lease as the engine's leasekit.Backend: a claim is an
// etcd lease with the id's key attached to it.
type backend Lease

func (b *backend) l() *Lease { return (*Lease)(b) }

func (b *backend) Open(_ context.Context, now func() int64) error {
	if b.now, b.cli = now, b.given; b.cli != nil {
		return nil
	}
	cli, err := b.l().dial()
	b.cli = cli
	return err
}

func (b *backend) Close() {
	if b.given == nil && b.cli != nil {
		_ = b.cli.Close()
	}
}

func (b *backend) CheckClock(ctx context.Context) error { return b.l().checkClocks(ctx) }

func (b *backend) NewToken(ctx context.Context) (int64, time.Duration, error) {
	gctx, cancel := b.l().timeout(ctx)
	defer cancel()
	g, err := b.cli.Grant(gctx, int64(b.o.TTL/time.Second))
	if err != nil {
		return 0, 0, b.l().unavailable(gctx, "granting a lease", err)
	}
	return int64(g.ID), time.Duration(g.TTL) * time.Second, nil
}

// TryClaim creates id's key under the lease if absent — two nodes can
// never both succeed — reading id's mark and noting that the id was held,
// reporting this node's clock (and its range) in the same transaction;
// when the key exists it lists the ids held instead: one round trip.
func (b *backend) TryClaim(ctx context.Context, token, id int64) (leasekit.Claimed, error) {
	tctx, cancel := b.l().timeout(ctx)
	defer cancel()
	lease, key := clientv3.LeaseID(token), b.keys.Machine(id)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(append([]clientv3.Op{clientv3.OpPut(key, b.o.NodeName, clientv3.WithLease(lease)), clientv3.OpGet(b.keys.Mark(id)),
			clientv3.OpGet(b.keys.Claimed(id)), clientv3.OpPut(b.keys.Claimed(id), b.o.NodeName), b.l().clockOp(lease)},
			b.l().rangeOp(lease)...)...).
		Else(clientv3.OpGet(b.keys.Machines(), clientv3.WithPrefix(), clientv3.WithKeysOnly())).Commit()
	if err != nil {
		return leasekit.Claimed{}, b.l().unavailable(tctx, "claiming machine "+strconv.FormatInt(id, 10), err)
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
	if c.Mark, err = b.l().parseMark(id, marks); err != nil {
		return c, err
	}
	// claimed/<id> (no lease, never deleted by us) says the id was held:
	// without a mark it was deleted, or restored from an old backup.
	c.MarkLost = len(marks) == 0 && len(resp.Responses[2].GetResponseRange().GetKvs()) > 0
	return c, b.l().checkRanges(ctx, lease)
}

// Renew renews the lease with KeepAliveOnce, which writes nothing to
// etcd's history (the client's background keep-alive is not trusted for
// fencing).
func (b *backend) Renew(ctx context.Context, c leasekit.Claim) (time.Duration, error) {
	rctx, cancel := b.l().timeout(ctx)
	defer cancel()
	resp, err := b.cli.KeepAliveOnce(rctx, clientv3.LeaseID(c.Token))
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return 0, fmt.Errorf("etcd says the lease is gone (expired or revoked): %w", ErrNotHeld)
	case err != nil:
		return 0, b.l().unavailable(rctx, "renewing the lease", err)
	case c.Cluster != 0 && resp.ClusterId != c.Cluster:
		return 0, fmt.Errorf("the lease is of another etcd cluster: %w", ErrNotHeld)
	}
	return time.Duration(resp.TTL) * time.Second, nil
}

// Held checks that the id's key is attached to the lease and reads the
// mark: read-only, so it works under etcd's NOSPACE alarm too.
func (b *backend) Held(ctx context.Context, c leasekit.Claim) (int64, error) {
	tctx, cancel := b.l().timeout(ctx)
	defer cancel()
	key := b.keys.Machine(c.Machine)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", clientv3.LeaseID(c.Token))).
		Then(clientv3.OpGet(b.keys.Mark(c.Machine))).Commit()
	if err != nil {
		return 0, b.l().unavailable(tctx, "checking the key of machine "+strconv.FormatInt(c.Machine, 10), err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("the key %s is gone or belongs to another lease: %w", key, ErrNotHeld)
	}
	return b.l().parseMark(c.Machine, resp.Responses[0].GetResponseRange().GetKvs())
}

// StoreMark stores the mark only while the id's key is attached to the
// lease; the same transaction refreshes this node's clock report and the
// key's node name (a resumed run may have another): one revision per
// node per renewal.
func (b *backend) StoreMark(ctx context.Context, c leasekit.Claim, ms int64) error {
	lease, key := clientv3.LeaseID(c.Token), b.keys.Machine(c.Machine)
	resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", lease)).Then(
		clientv3.OpPut(b.keys.Mark(c.Machine), strconv.FormatInt(ms, 10)), b.l().clockOp(lease),
		clientv3.OpPut(key, b.o.NodeName, clientv3.WithLease(lease))).Commit()
	b.l().noteNoSpace(errors.Is(err, rpctypes.ErrNoSpace) || (err != nil && b.noSpace.Load()), c.Machine)
	if err != nil {
		return b.l().unavailable(ctx, "storing the mark of machine "+strconv.FormatInt(c.Machine, 10), err)
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

func (b *backend) Renewed(ctx context.Context, c leasekit.Claim) { b.l().watchHistory(ctx, c.Machine) }

func (b *backend) AddStats(st *service.LeaseStats) {
	st.UncompactedRevisions, st.NoSpace = b.uncompacted.Load(), b.noSpace.Load()
}

// parseMark reads id's mark from the result of a Get (0 when absent).
func (l *Lease) parseMark(id int64, kvs []*mvccKV) (int64, error) {
	if len(kvs) == 0 {
		return 0, nil
	}
	v := strings.TrimSpace(string(kvs[0].Value))
	if mark, err := strconv.ParseInt(v, 10, 64); err == nil && mark >= 0 {
		return mark, nil
	}
	return 0, fmt.Errorf("etcdlease: the high-water mark %s is corrupt (%q): set it to a Unix ms time surely past the last IDs of machine %d, or delete it once the clocks are surely past them",
		l.keys.Mark(id), v, id)
}

// clockOp reports this node's clock (Unix ms) under the lease.
func (l *Lease) clockOp(lease clientv3.LeaseID) clientv3.Op {
	return clientv3.OpPut(l.keys.Clock(l.o.NodeName), strconv.FormatInt(l.now()/int64(time.Millisecond), 10), clientv3.WithLease(lease))
}

// noteNoSpace says loudly, once per episode, that etcd refuses writes
// because its quota is full, and when it accepts them again. The line is
// logged before the flag (Stats().Lease.NoSpace) changes, so that whoever
// sees the flag finds the line that explains it.
func (l *Lease) noteNoSpace(full bool, machine int64) {
	l.noSpaceMu.Lock()
	defer l.noSpaceMu.Unlock()
	if l.noSpace.Load() == full {
		return
	}
	if full {
		l.o.Logger.Error("etcdlease: etcd is out of space (NOSPACE alarm) and refuses writes: this node issues IDs up to the mark already stored, then stops until space is freed; compact and defragment etcd, then `etcdctl alarm disarm` (docs/operations.md)",
			"machine", machine)
	} else {
		l.o.Logger.Info("etcdlease: etcd accepts writes again (NOSPACE cleared)", "machine", machine)
	}
	l.noSpace.Store(full)
}
