package etcdlease

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
)

// claim takes the lowest free machine id (c.prefer first, when it is free;
// never c.skip) for s's lease and returns it with its stored high-water
// mark (0 if none). Each attempt is one transaction that creates the id's
// key only if it does not exist, so two nodes can never both succeed.
func (l *Lease) claim(ctx context.Context, s *session, c choice) (machine, prevMark int64, err error) {
	gctx, cancel := l.timeout(ctx)
	resp, err := l.cli.Get(gctx, l.keys.Machines(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	cancel()
	if err != nil {
		return 0, 0, l.unavailable(gctx, "listing the machine ids held", err)
	}
	taken := make(map[int64]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if id, ok := l.keys.machineOf(string(kv.Key)); ok {
			taken[id] = true
		}
	}
	for id := range c.skip {
		taken[id] = true
	}
	for _, id := range candidates(c.prefer, taken) {
		ok, mark, err := l.tryClaim(ctx, s, id)
		if err != nil || ok {
			return id, mark, err
		}
	}
	return 0, 0, fmt.Errorf("etcdlease: all %d machine ids under %s are held by live leases: %w", intf.MaxMachine+1, l.keys.Machines(), ErrAllTaken)
}

// candidates lists the ids to try, in order: prefer if it is free, then
// every free id upwards.
func candidates(prefer int64, taken map[int64]bool) []int64 {
	ids := make([]int64, 0, intf.MaxMachine+1-len(taken))
	if prefer >= 0 && prefer <= intf.MaxMachine && !taken[prefer] {
		ids = append(ids, prefer)
	}
	for id := int64(0); id <= intf.MaxMachine; id++ {
		if !taken[id] && id != prefer {
			ids = append(ids, id)
		}
	}
	return ids
}

// tryClaim creates id's key under s's lease if nobody holds it, and reads
// id's mark in the same transaction.
func (l *Lease) tryClaim(ctx context.Context, s *session, id int64) (ok bool, mark int64, err error) {
	ctx, cancel := l.timeout(ctx)
	defer cancel()
	key := l.keys.Machine(id)
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, l.o.NodeName, clientv3.WithLease(s.lease)), clientv3.OpGet(l.keys.Mark(id))).
		Commit()
	if err != nil {
		return false, 0, l.unavailable(ctx, "claiming machine "+strconv.FormatInt(id, 10), err)
	}
	if !resp.Succeeded {
		return false, 0, nil
	}
	kvs := resp.Responses[1].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return true, 0, nil
	}
	v := strings.TrimSpace(string(kvs[0].Value))
	mark, err = strconv.ParseInt(v, 10, 64)
	if err != nil || mark < 0 {
		return true, 0, fmt.Errorf("etcdlease: the high-water mark %s is corrupt (%q): set it to a Unix ms time surely past the last IDs of machine %d, or delete it once the clocks are surely past them",
			l.keys.Mark(id), v, id)
	}
	return true, mark, nil
}
