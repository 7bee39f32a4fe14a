package leasekit

import (
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/vesta-go/vesta/service/machineid"
)

// State is what resumes a node's claim after a restart. Times are service clock ns.
type State struct {
	Cluster      uint64 `json:"cluster,omitempty"` // etcd's cluster id, when known
	Endpoints    string `json:"endpoints"`         // names the coordinator (never a password)
	Prefix       string `json:"prefix"`
	Node         string `json:"node"`
	Host         string `json:"host"`  // a data dir copied to another host must not resume its original's claim
	Lease        int64  `json:"lease"` // etcd's lease id, PostgreSQL's token; 0: released (Machine: a preference)
	Machine      int64  `json:"machine"`
	ClaimMarkMs  int64  `json:"claimMarkMs"`      // the floor the hold started above
	StoredMarkMs int64  `json:"storedMarkMs"`     // a mark known stored in the coordinator
	ValidUntil   int64  `json:"validUntil"`       // the fence
	Saved        int64  `json:"saved"`            // a clock found before it after a restart has stepped back
	LeadNs       int64  `json:"leadNs,omitempty"` // how far ahead of its clock the saving run issued (Holder.Lead)
}

// loadState reads the state saved on this host for this coordinator, prefix and
// range; else nil, logging why.
func (e *Engine) loadState(h machineid.Holder) *State {
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
	if st.Prefix != e.c.Prefix || st.Endpoints != e.c.Endpoints || !e.c.MachineRange.Contains(st.Machine) {
		e.c.Logger.Info(e.c.Provider+": the lease state in the data dir is for another coordinator, prefix or range; not resuming it",
			"prefix", st.Prefix, "machine", st.Machine)
		return nil
	}
	return &st
}

// saveState stores what resumes hd after a restart (nothing once released); a
// failure is logged.
func (e *Engine) saveState(hd *hold) error {
	hd.stateMu.Lock()
	defer hd.stateMu.Unlock()
	st := State{Cluster: hd.cluster, Endpoints: e.c.Endpoints, Prefix: e.c.Prefix, Node: e.c.NodeName, Host: hostname(),
		Machine: hd.machine, Saved: hd.h.Now(), LeadNs: int64(hd.h.Lead())}
	if !hd.released {
		st.Lease, st.ClaimMarkMs, st.StoredMarkMs, st.ValidUntil = hd.token, hd.prevMark, hd.storedMark.Load(), hd.validUntil.Load()
	}
	b, _ := json.Marshal(st)
	if err := hd.h.SaveLeaseState(b); err != nil {
		e.c.Logger.Warn(e.c.Provider+": cannot save the lease state in the data dir; a restart will claim an id anew", "err", err)
		return err
	}
	hd.savedValid.Store(st.ValidUntil)
	return nil
}

// OfflineValidity is until when a hold resumed offline from st is surely valid:
// its saved validity capped at its mark; 0 if the clock stepped back.
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
