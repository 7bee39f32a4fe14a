package leasekit

import (
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/vesta-go/vesta/service"
)

// State is what a node keeps in its data dir to resume its claim after a
// restart. Times are service clock (Unix) nanoseconds.
type State struct {
	Cluster uint64 `json:"cluster,omitempty"` // etcd cluster id, when known
	// Endpoints names the coordinator (etcd's endpoints, PostgreSQL's
	// host:port/database and table; never a password).
	Endpoints string `json:"endpoints"`
	Prefix    string `json:"prefix"`
	Node      string `json:"node"`
	// Host: a data dir copied to another host must not resume the claim
	// its original still holds.
	Host string `json:"host"`
	// Lease is etcd's lease id or PostgreSQL's token; 0: released, and
	// Machine is only a preference then.
	Lease   int64 `json:"lease"`
	Machine int64 `json:"machine"`
	// ClaimMarkMs is the floor the hold started above.
	ClaimMarkMs int64 `json:"claimMarkMs"`
	// StoredMarkMs is a mark known stored in the coordinator for Machine.
	StoredMarkMs int64 `json:"storedMarkMs"`
	ValidUntil   int64 `json:"validUntil"` // the fence
	// Saved: a clock found before it after a restart has stepped back.
	Saved int64 `json:"saved"`
	// LeadNs is how far ahead of its clock the saving run issued
	// (service.LeaseHolder.Lead).
	LeadNs int64 `json:"leadNs,omitempty"`
}

// loadState reads the state the previous run saved, if it was saved on
// this host for this coordinator, prefix and range; else nil, saying why.
func (e *Engine) loadState(h service.LeaseHolder) *State {
	b := h.LeaseState()
	if b == nil {
		return nil
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		e.c.Logger.Warn(e.c.Provider+": ignoring an unreadable lease state in the data dir", "err", err)
		return nil
	}
	if host := hostname(); st.Host != host {
		e.c.Logger.Warn(e.c.Provider+": the lease state in the data dir was saved on another host (a copied data dir?); not resuming it",
			"savedOn", st.Host, "host", host, "machine", st.Machine)
		return nil
	}
	if st.Prefix != e.c.Prefix || st.Endpoints != e.c.Endpoints || !e.c.Range.Contains(st.Machine) {
		e.c.Logger.Info(e.c.Provider+": the lease state in the data dir is for another coordinator, prefix or range; not resuming it",
			"prefix", st.Prefix, "machine", st.Machine)
		return nil
	}
	return &st
}

// saveState stores what resumes hd after a restart (a released hold:
// nothing). A failure is logged: the next start claims anew, or resumes
// an older state, whose validity and mark are only shorter.
func (e *Engine) saveState(h service.LeaseHolder, hd *hold) error {
	hd.stateMu.Lock()
	defer hd.stateMu.Unlock()
	st := State{Cluster: hd.cluster, Endpoints: e.c.Endpoints, Prefix: e.c.Prefix, Node: e.c.NodeName, Host: hostname(),
		Machine: hd.machine, Saved: h.Now(), LeadNs: int64(h.Lead())}
	if !hd.released {
		st.Lease, st.ClaimMarkMs, st.StoredMarkMs, st.ValidUntil = hd.token, hd.prevMark, hd.storedMark.Load(), hd.validUntil.Load()
	}
	b, _ := json.Marshal(st)
	if err := h.SaveLeaseState(b); err != nil {
		e.c.Logger.Warn(e.c.Provider+": cannot save the lease state in the data dir; a restart will claim an id anew", "err", err)
		return err
	}
	return nil
}

// OfflineValidity is until when a hold resumed from st without reaching
// the coordinator is surely valid (service clock), or 0: the saved
// validity, and no later than the mark known stored, which then covers
// every ID. A clock found before the save has stepped back. A resume is
// logged with the time left from now, after the coordinator failed to
// answer (the service stops at the last whole time unit before it).
func (st *State) OfflineValidity(now int64, log *slog.Logger, provider, coordinator string, err error) int64 {
	valid := min(st.ValidUntil, st.StoredMarkMs*int64(time.Millisecond))
	if now < st.Saved || now >= valid {
		return 0
	}
	log.Warn(provider+": "+coordinator+" is unreachable; resuming the machine id on the claim saved in the data dir, with the data dir's mark as its floor",
		"machine", st.Machine, "validFor", time.Duration(valid-now).Round(time.Millisecond), "err", err)
	return valid
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
