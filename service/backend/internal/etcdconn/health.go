package etcdconn

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Health is what a client of etcd notices of the cluster's own health as
// it writes: a NOSPACE alarm (a full quota refuses every write) and a
// history that is never compacted (which fills the quota).
type Health struct {
	Every  time.Duration // how often WatchHistory reads (on the caller's clock)
	Warn   int64         // uncompacted revisions above which it warns
	Logger *slog.Logger

	noSpace                 atomic.Bool  // the last write met the NOSPACE alarm
	mu                      sync.Mutex   // orders NoteNoSpace's transitions
	histChecked, histOldest atomic.Int64 // the clock of the last check; the oldest revision seen and still readable
	uncompacted             atomic.Int64 // revisions since histOldest
}

// NoSpace says that the last write met the NOSPACE alarm.
func (h *Health) NoSpace() bool { return h.noSpace.Load() }

// Uncompacted is how many revisions etcd keeps uncompacted (a lower bound; 0 when unknown).
func (h *Health) Uncompacted() int64 { return h.uncompacted.Load() }

// NoteNoSpace logs, once per episode, that etcd's quota is full, and when it is
// not, before the flag changes.
func (h *Health) NoteNoSpace(full bool, machine int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.noSpace.Load() == full {
		return
	}
	if full {
		h.Logger.Error("etcdlease: etcd is out of space (NOSPACE alarm) and refuses writes: this node issues IDs up to the mark already stored, then stops until space is freed; compact and defragment etcd, then `etcdctl alarm disarm` (docs/operations.md)",
			"machine", machine)
	} else {
		h.Logger.Info("etcdlease: etcd accepts writes again (NOSPACE cleared)", "machine", machine)
	}
	h.noSpace.Store(full)
}

// WatchHistory reads, at most once per Every, whether the oldest revision
// seen of key is still readable (then etcd kept every one since); it warns
// above Warn.
func (h *Health) WatchHistory(ctx context.Context, cli *clientv3.Client, key string, now int64) {
	if last := h.histChecked.Load(); last != 0 && now-last < int64(h.Every) {
		return
	}
	h.histChecked.Store(now)
	cur, err := cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		return
	}
	rev, oldest := cur.Header.Revision, h.histOldest.Load()
	if oldest == 0 {
		h.histOldest.Store(rev)
		return
	}
	switch _, err = cli.Get(ctx, key, clientv3.WithCountOnly(), clientv3.WithRev(oldest)); {
	case errors.Is(err, rpctypes.ErrCompacted): // compacted since: count again from now
		h.histOldest.Store(rev)
		h.uncompacted.Store(0)
	case err == nil:
		h.uncompacted.Store(rev - oldest)
		if rev-oldest > h.Warn {
			h.Logger.Warn("etcdlease: etcd keeps every revision: its history is not compacted, and a full quota (NOSPACE) stops every write; run etcd with --auto-compaction-mode=periodic --auto-compaction-retention=1h (see docs/operations.md)",
				"revisionsSince", oldest, "uncompacted", rev-oldest)
		}
	}
}
