package leasekit

import (
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/vesta-go/vesta/service"
)

// State is what a node keeps in its data dir
// (service.LeaseHolder.SaveLeaseState) to resume its hold after a restart:
// the lease and the id under it, and how long the lease is surely valid.
// Times are service clock nanoseconds (Unix time): SystemClock starts
// from the wall clock, so they carry across a restart.
type State struct {
	Cluster uint64 `json:"cluster,omitempty"` // etcd cluster id, when known
	// Endpoints names the coordinator: etcd's endpoints, or PostgreSQL's
	// host:port/database and table (never a password).
	Endpoints string `json:"endpoints"`
	Prefix    string `json:"prefix"`
	Node      string `json:"node"`
	// Host is the host name of the run that saved it: a data dir copied
	// to another host (a cloned VM, a copied volume) must not resume the
	// lease its original still holds.
	Host string `json:"host"`
	// Lease is etcd's lease id or PostgreSQL's fencing token; 0: released,
	// and Machine is only a preference then.
	Lease   int64 `json:"lease"`
	Machine int64 `json:"machine"`
	// ClaimMarkMs is the mark of the earlier holders when the id was
	// claimed: the floor of every mark this hold stores.
	ClaimMarkMs int64 `json:"claimMarkMs"`
	// StoredMarkMs is a mark known to be stored in the coordinator for Machine.
	StoredMarkMs int64 `json:"storedMarkMs"`
	// ValidUntil is when the lease is surely still held (the fence).
	ValidUntil int64 `json:"validUntil"`
	// Saved is when this was saved; a clock found before it after a
	// restart has stepped back, and the validity cannot be trusted.
	Saved int64 `json:"saved"`
	// LeadNs is how far ahead of its clock the run that saved it issued
	// (service.LeaseHolder.Lead).
	LeadNs int64 `json:"leadNs,omitempty"`
}

// LoadState reads the state the previous run saved, if it was saved on
// this host for this coordinator (endpoints), prefix and range; else nil,
// saying why to log (provider names the package in the messages).
func LoadState(h service.LeaseHolder, log *slog.Logger, provider, endpoints, prefix string, r Range) *State {
	b := h.LeaseState()
	if b == nil {
		return nil
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		log.Warn(provider+": ignoring an unreadable lease state in the data dir", "err", err)
		return nil
	}
	if host := Hostname(); st.Host != host {
		log.Warn(provider+": the lease state in the data dir was saved on another host (a copied data dir?); not resuming it",
			"savedOn", st.Host, "host", host, "machine", st.Machine)
		return nil
	}
	if st.Prefix != prefix || st.Endpoints != endpoints || st.Machine < 0 || !r.Contains(st.Machine) {
		log.Info(provider+": the lease state in the data dir is for another coordinator, prefix or range; not resuming it",
			"prefix", st.Prefix, "machine", st.Machine)
		return nil
	}
	return &st
}

// Released is st as saved once its lease is given up: a restart can no
// longer resume it (its id may be someone else's by then), Machine stays
// a preference.
func (st State) Released() State {
	st.Lease, st.ValidUntil, st.StoredMarkMs = 0, 0, 0
	return st
}

// SaveState stores st for the next run. A failure is logged (and
// returned): the next start then claims an id as a new node would, or
// resumes an older state — which is safe, as its validity and mark only
// shrink from one save to the next but for renewals.
func SaveState(h service.LeaseHolder, log *slog.Logger, provider string, st State) error {
	b, _ := json.Marshal(st)
	if err := h.SaveLeaseState(b); err != nil {
		log.Warn(provider+": cannot save the lease state in the data dir; a restart will claim an id anew", "err", err)
		return err
	}
	return nil
}

// OfflineValidity is until when a hold resumed from st without reaching
// the coordinator is surely valid (service clock), or 0 when it is not:
// the saved validity, and no later than the mark known stored less the
// lead the service stores marks ahead by — past it the service could not
// store the mark it needs. A clock found before the save has stepped
// back. A hold resumed is logged with the time truly left.
func (st *State) OfflineValidity(now int64, lead time.Duration, log *slog.Logger, provider, coordinator string, err error) int64 {
	valid := min(st.ValidUntil, st.StoredMarkMs*int64(time.Millisecond)-int64(lead))
	if now < st.Saved || now >= valid {
		return 0
	}
	log.Warn(provider+": "+coordinator+" is unreachable; resuming the machine id on the claim saved in the data dir, with the data dir's mark as its floor",
		"machine", st.Machine, "validFor", time.Duration(valid-now).Round(time.Millisecond), "err", err)
	return valid
}

// Hostname is this host's name ("" when unknown).
func Hostname() string {
	h, _ := os.Hostname()
	return h
}
