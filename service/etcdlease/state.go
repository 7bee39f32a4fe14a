package etcdlease

import (
	"strings"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// savedState is what a node keeps in its data dir to resume its hold
// after a restart (leasekit.State; Lease is the etcd lease id).
type savedState = leasekit.State

// loadState reads the state the previous run saved, if it belongs to this
// etcd (same endpoints as configured, same prefix), host and range.
func (l *Lease) loadState(h service.LeaseHolder) *savedState {
	return leasekit.LoadState(h, l.o.Logger, "etcdlease", strings.Join(l.o.Endpoints, ","), l.o.Prefix, l.claimRange())
}

// saveState stores what resumes s after a restart (leasekit.SaveState).
func (l *Lease) saveState(h service.LeaseHolder, s *session) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	st := savedState{
		Cluster: s.cluster, Endpoints: strings.Join(l.o.Endpoints, ","), Prefix: l.o.Prefix, Node: l.o.NodeName, Host: leasekit.Hostname(),
		Lease: int64(s.lease), Machine: s.machine, ClaimMarkMs: s.prevMark, StoredMarkMs: s.storedMark.Load(),
		ValidUntil: s.validUntil.Load(), Saved: h.Now(),
	}
	if s.released {
		st = st.Released()
	}
	return leasekit.SaveState(h, l.o.Logger, "etcdlease", st)
}
