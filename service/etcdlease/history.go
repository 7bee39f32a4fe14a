package etcdlease

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchHistory runs after a renewal, at most once per historyEvery (5
// minutes): it reads whether the oldest revision seen is still readable.
// If it is, etcd has kept every revision since (no compaction), and the
// count grows with the fleet's writes until etcd's quota fills and it
// refuses every write (NOSPACE). Above historyWarn (a million) it warns;
// the count is Stats().UncompactedRevisions.
func (l *Lease) watchHistory(ctx context.Context, machine int64) {
	now := l.now()
	if last := l.histChecked.Load(); last != 0 && now-last < int64(l.historyEvery) {
		return
	}
	l.histChecked.Store(now)
	key := l.keys.Machine(machine)
	gctx, cancel := l.timeout(ctx)
	defer cancel()
	cur, err := l.cli.Get(gctx, key, clientv3.WithCountOnly())
	if err != nil {
		return
	}
	rev, oldest := cur.Header.Revision, l.histOldest.Load()
	if oldest == 0 {
		l.histOldest.Store(rev)
		return
	}
	switch _, err = l.cli.Get(gctx, key, clientv3.WithCountOnly(), clientv3.WithRev(oldest)); {
	case errors.Is(err, rpctypes.ErrCompacted): // compacted since: count again from now
		l.histOldest.Store(rev)
		l.uncompacted.Store(0)
	case err == nil:
		l.uncompacted.Store(rev - oldest)
		if rev-oldest > l.historyWarn {
			l.o.Logger.Warn("etcdlease: etcd keeps every revision: its history is not compacted, and a full quota (NOSPACE) stops every write; run etcd with --auto-compaction-mode=periodic --auto-compaction-retention=1h (see docs/operations.md)",
				"revisionsSince", oldest, "uncompacted", rev-oldest)
		}
	}
}
