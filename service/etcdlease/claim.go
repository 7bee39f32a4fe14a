package etcdlease

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// maxClaimTxns bounds the transactions of one claim: each failed one
// returns the ids held at that moment, so only ids taken by others at
// the same time make it fail again.
const maxClaimTxns = 64

// claim takes a free machine id in the fleet's range for s's lease and
// returns it with its stored high-water mark (0 if none): c.prefer first
// when it may be free, else a random id the latest listing shows free
// (never one in c.skip). Each attempt is one transaction that creates the
// id's key only if it does not exist — so two nodes can never both
// succeed — and, when it exists, lists the ids held instead: a claim
// costs one round trip while the fleet is sparse, and N nodes starting
// at once do not all race for the lowest id.
func (l *Lease) claim(ctx context.Context, s *session, c choice) (machine, prevMark int64, err error) {
	r := l.claimRange()
	var taken map[int64]bool // nil until a transaction lists the ids held
	for range maxClaimTxns {
		id, ok := pick(r, c, taken, l.o.lowestFirst)
		if !ok {
			return 0, 0, l.allTaken(r, taken == nil)
		}
		c.prefer = -1
		ok, mark, held, err := l.tryClaim(ctx, s, id)
		if err != nil || ok {
			return id, mark, err
		}
		taken = held
	}
	return 0, 0, fmt.Errorf("etcdlease: %d claims in a row lost the race for a free id of %s in %s: %w", maxClaimTxns, r, l.keys.Machines(), ErrAllTaken)
}

// allTaken is the error of a range with no free id; unlisted means the
// only ids left were those in c.skip.
func (l *Lease) allTaken(r Range, unlisted bool) error {
	if unlisted {
		return fmt.Errorf("etcdlease: every free machine id of %s was refused for its mark: %w", r, ErrAllTaken)
	}
	return fmt.Errorf("etcdlease: all %d machine ids of %s under %s are held by live leases: %w", r.Size(), r, l.keys.Machines(), ErrAllTaken)
}

// claimRange is the range the fleet claims from.
func (l *Lease) claimRange() Range {
	if l.o.MachineRange != nil {
		return *l.o.MachineRange
	}
	return FullRange
}

// pick chooses the id to try (leasekit.Pick): c.prefer first, else a
// random free id of r not in c.skip; lowest picks the lowest (tests).
func pick(r Range, c choice, taken map[int64]bool, lowest bool) (int64, bool) {
	return leasekit.Pick(r, c.prefer, c.skip, taken, lowest)
}

// tryClaim creates id's key under s's lease if nobody holds it, reads
// id's mark and reports this node's clock (and registers its range) in
// the same transaction. When the key exists it returns the ids held.
func (l *Lease) tryClaim(ctx context.Context, s *session, id int64) (ok bool, mark int64, held map[int64]bool, err error) {
	ctx, cancel := l.timeout(ctx)
	defer cancel()
	key := l.keys.Machine(id)
	then := append([]clientv3.Op{
		clientv3.OpPut(key, l.o.NodeName, clientv3.WithLease(s.lease)),
		clientv3.OpGet(l.keys.Mark(id)),
		l.clockOp(s, time.Duration(s.now())),
	}, l.rangeOp(s)...)
	l.counters.ClaimTxns.Add(1)
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(then...).
		Else(clientv3.OpGet(l.keys.Machines(), clientv3.WithPrefix(), clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return false, 0, nil, l.unavailable(ctx, "claiming machine "+strconv.FormatInt(id, 10), err)
	}
	s.cluster = resp.Header.ClusterId
	if !resp.Succeeded {
		held = map[int64]bool{}
		for _, kv := range resp.Responses[0].GetResponseRange().GetKvs() {
			if h, ok := l.keys.machineOf(string(kv.Key)); ok {
				held[h] = true
			}
		}
		held[id] = true
		return false, 0, held, nil
	}
	mark, err = l.parseMark(id, resp.Responses[1].GetResponseRange().GetKvs())
	return true, mark, nil, err
}

// parseMark reads id's mark from the result of a Get (0 when absent).
func (l *Lease) parseMark(id int64, kvs []*mvccKV) (int64, error) {
	if len(kvs) == 0 {
		return 0, nil
	}
	v := strings.TrimSpace(string(kvs[0].Value))
	mark, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mark < 0 {
		return 0, fmt.Errorf("etcdlease: the high-water mark %s is corrupt (%q): set it to a Unix ms time surely past the last IDs of machine %d, or delete it once the clocks are surely past them",
			l.keys.Mark(id), v, id)
	}
	return mark, nil
}

// clockOp reports this node's clock (now, service clock) under s's lease.
func (l *Lease) clockOp(s *session, now time.Duration) clientv3.Op {
	return clientv3.OpPut(l.keys.Clock(l.o.NodeName), strconv.FormatInt(int64(now/time.Millisecond), 10), clientv3.WithLease(s.lease))
}
