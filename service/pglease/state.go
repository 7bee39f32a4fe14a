package pglease

import (
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// stateEndpoints names the database and table in the saved state: a
// state saved for another database or table is not resumed.
func (l *Lease) stateEndpoints() string { return "postgres://" + l.server + "?table=" + l.o.Table }

// saveState stores what resumes hd after a restart (leasekit.State; Lease
// is the token).
func (l *Lease) saveState(h service.LeaseHolder, hd *hold) error {
	hd.stateMu.Lock()
	defer hd.stateMu.Unlock()
	st := leasekit.State{
		Endpoints: l.stateEndpoints(), Prefix: l.o.Prefix, Node: l.o.NodeName, Host: leasekit.Hostname(),
		Lease: hd.token, Machine: hd.machine, ClaimMarkMs: hd.prevMark, StoredMarkMs: hd.storedMark.Load(),
		ValidUntil: hd.validUntil.Load(), Saved: h.Now(),
	}
	if hd.released {
		st = st.Released()
	}
	return leasekit.SaveState(h, l.o.Logger, "pglease", st)
}
