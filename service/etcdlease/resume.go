package etcdlease

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service"
)

// resume takes up the hold of the previous run on this data dir (st): the
// same lease and id, without a new claim and without waiting for that
// run's marks — the data dir's mark, which the service starts above,
// bounds every ID it issued (service.LeaseHolder.LeaseState).
//
// With etcd reachable, the lease is renewed and the id's key checked to be
// still attached to it. With etcd unreachable (Leaf's weak dependency), the
// hold resumes on the validity and the mark the previous run saved, if the
// clock shows that validity still running: the lease cannot have expired
// before it, so no other node can hold the id. It returns nil, nil when st
// cannot be resumed (the lease expired or was revoked, the id is no longer
// under it, the saved validity ran out): the caller claims anew.
func (l *Lease) resume(ctx context.Context, h service.LeaseHolder, st *savedState) (*session, error) {
	s := newSession(clientv3.LeaseID(st.Lease), h)
	s.machine, s.prevMark, s.cluster = st.Machine, st.ClaimMarkMs, st.Cluster
	s.storedMark.Store(st.StoredMarkMs)
	now := h.Now()
	ok, err := l.reattach(ctx, s, st, now)
	switch {
	case err == nil && !ok:
		return nil, nil
	case err != nil:
		// No answer from etcd: resume on what the previous run saved.
		// The fence stops at the saved validity, and no later than the
		// mark known stored, which then covers every ID issued.
		valid := st.OfflineValidity(now, l.o.Logger, "etcdlease", "etcd", err)
		if valid == 0 {
			return nil, nil
		}
		s.validUntil.Store(valid)
		s.offline.Store(true)
	}
	l.startRenewing(ctx, h, s)
	l.setCurrent(s)
	if err := h.Hold(ctx, s.machine, s.validUntil.Load(), s.prevMark); err != nil {
		l.setCurrent(nil)
		l.release(h, s)
		return nil, fmt.Errorf("resuming machine %d: %w", s.machine, err)
	}
	s.rename.Store(st.Node != l.o.NodeName)
	l.counters.Resumes.Add(1)
	l.held(h, s)
	l.o.Logger.Info("etcdlease: machine id resumed from the data dir", "machine", s.machine, "node", l.o.NodeName,
		"lease", fmt.Sprintf("%x", st.Lease), "offline", s.offline.Load())
	return s, nil
}

// reattach renews s's lease and checks that s's id is still attached to
// it, reading the id's mark. ok false: the lease or the id is gone (a
// lease still alive without the id is revoked). An error: etcd did not
// answer.
func (l *Lease) reattach(ctx context.Context, s *session, st *savedState, t0 int64) (ok bool, err error) {
	kctx, cancel := l.timeout(ctx)
	resp, err := l.cli.KeepAliveOnce(kctx, s.lease)
	cancel()
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		l.o.Logger.Info("etcdlease: the lease saved in the data dir has expired or was revoked; claiming anew (the same id preferred)", "machine", st.Machine)
		return false, nil
	}
	if err != nil {
		return false, l.unavailable(kctx, "renewing the lease saved in the data dir", err)
	}
	if st.Cluster != 0 && resp.ClusterId != st.Cluster {
		l.o.Logger.Warn("etcdlease: the lease saved in the data dir is from another etcd cluster; claiming anew", "machine", st.Machine)
		return false, nil
	}
	s.validUntil.Store(t0 + int64(l.validity(resp.TTL)))
	key := l.keys.Machine(s.machine)
	tctx, cancel := l.timeout(ctx)
	defer cancel()
	// Read-only: it works under etcd's NOSPACE alarm too.
	tresp, err := l.cli.Txn(tctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", s.lease)).
		Then(clientv3.OpGet(l.keys.Mark(s.machine))).Commit()
	if err != nil {
		return false, l.unavailable(tctx, "checking the machine key of the lease saved in the data dir", err)
	}
	if !tresp.Succeeded {
		l.o.Logger.Warn("etcdlease: the machine key is no longer attached to the lease saved in the data dir; claiming anew", "key", key)
		if _, err := l.cli.Revoke(tctx, s.lease); err != nil {
			l.o.Logger.Debug("etcdlease: cannot revoke the saved lease", "err", err)
		}
		return false, nil
	}
	mark, err := l.parseMark(s.machine, tresp.Responses[0].GetResponseRange().GetKvs())
	if err != nil {
		return false, err
	}
	s.storedMark.Store(max(s.storedMark.Load(), mark))
	return true, nil
}
