package etcdlease

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/vesta-go/vesta/service"
)

// savedState is what a node keeps in its data dir
// (service.LeaseHolder.SaveLeaseState) to resume its hold after a restart:
// the lease and the id under it, and how long the lease is surely valid.
// Times are service clock nanoseconds (Unix time): SystemClock starts
// from the wall clock, so they carry across a restart.
type savedState struct {
	Cluster   uint64 `json:"cluster,omitempty"` // etcd cluster id, when known
	Endpoints string `json:"endpoints"`
	Prefix    string `json:"prefix"`
	Node      string `json:"node"`
	// Host is the host name of the run that saved it: a data dir copied
	// to another host (a cloned VM, a copied volume) must not resume the
	// lease its original still holds.
	Host    string `json:"host"`
	Lease   int64  `json:"lease"` // 0: released (revoked); Machine is only a preference then
	Machine int64  `json:"machine"`
	// ClaimMarkMs is the mark of the earlier holders when the id was
	// claimed: the floor of every mark this hold stores.
	ClaimMarkMs int64 `json:"claimMarkMs"`
	// StoredMarkMs is a mark known to be stored in etcd for Machine.
	StoredMarkMs int64 `json:"storedMarkMs"`
	// ValidUntil is when the lease is surely still held (the fence).
	ValidUntil int64 `json:"validUntil"`
	// Saved is when this was saved; a clock found before it after a
	// restart has stepped back, and the validity cannot be trusted.
	Saved int64 `json:"saved"`
}

// loadState reads the state the previous run saved, if it belongs to this
// etcd (same endpoints as configured, same prefix).
func (l *Lease) loadState(h service.LeaseHolder) *savedState {
	b := h.LeaseState()
	if b == nil {
		return nil
	}
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil {
		l.o.Logger.Warn("etcdlease: ignoring an unreadable lease state in the data dir", "err", err)
		return nil
	}
	if host := hostname(); st.Host != host {
		l.o.Logger.Warn("etcdlease: the lease state in the data dir was saved on another host (a copied data dir?); not resuming it",
			"savedOn", st.Host, "host", host, "machine", st.Machine)
		return nil
	}
	if st.Prefix != l.o.Prefix || st.Endpoints != strings.Join(l.o.Endpoints, ",") || st.Machine < 0 || !l.claimRange().Contains(st.Machine) {
		l.o.Logger.Info("etcdlease: the lease state in the data dir is for another etcd, prefix or range; not resuming it",
			"prefix", st.Prefix, "machine", st.Machine)
		return nil
	}
	return &st
}

// saveState stores what resumes s after a restart. A failure is logged
// (and returned): the next start then claims an id as a new node would,
// or resumes an older state — which is safe, as its validity and mark
// only shrink from one save to the next but for renewals.
func (l *Lease) saveState(h service.LeaseHolder, s *session) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	st := savedState{
		Cluster: s.cluster, Endpoints: strings.Join(l.o.Endpoints, ","), Prefix: l.o.Prefix, Node: l.o.NodeName, Host: hostname(),
		Lease: int64(s.lease), Machine: s.machine, ClaimMarkMs: s.prevMark, StoredMarkMs: s.storedMark.Load(),
		ValidUntil: s.validUntil.Load(), Saved: h.Now(),
	}
	if s.released {
		st.Lease, st.ValidUntil, st.StoredMarkMs = 0, 0, 0
	}
	b, _ := json.Marshal(st)
	if err := h.SaveLeaseState(b); err != nil {
		l.o.Logger.Warn("etcdlease: cannot save the lease state in the data dir; a restart will claim an id anew", "err", err)
		return err
	}
	return nil
}

// hostname is this host's name ("" when unknown).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
