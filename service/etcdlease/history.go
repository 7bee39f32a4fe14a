package etcdlease

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watching etcd's history: every historyEvery a node reads whether the
// oldest revision it has seen is still readable. If it is, etcd has kept
// every revision since (no compaction), and the count grows with the
// fleet's writes until etcd's quota fills and it refuses every write
// (NOSPACE). Above historyWarn revisions the node warns, once per
// historyEvery; the count is Stats().UncompactedRevisions.
const (
	historyEvery = 5 * time.Minute
	historyWarn  = 1_000_000
)

// watchHistory runs after a renewal: at most once per historyEvery it
// compares the current revision with the oldest one seen and still
// readable.
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
	rev := cur.Header.Revision
	oldest := l.histOldest.Load()
	if oldest == 0 {
		l.histOldest.Store(rev)
		return
	}
	_, err = l.cli.Get(gctx, key, clientv3.WithCountOnly(), clientv3.WithRev(oldest))
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		// Compacted since: count again from now.
		l.histOldest.Store(rev)
		l.uncompacted.Store(0)
	case err != nil:
		return
	default:
		n := rev - oldest
		l.uncompacted.Store(n)
		if n > l.historyWarn {
			l.o.Logger.Warn("etcdlease: etcd keeps every revision: its history is not compacted, and a full quota (NOSPACE) stops every write; run etcd with --auto-compaction-mode=periodic --auto-compaction-retention=1h (see docs/operations.md)",
				"revisionsSince", oldest, "uncompacted", n)
		}
	}
}
