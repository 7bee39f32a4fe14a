package pglease

import (
	"context"
	"errors"
	"fmt"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// resume takes up the hold of the previous run on this data dir (st): the
// same id and token, without a new claim and without waiting for that
// run's marks — the data dir's mark, which the service starts above,
// bounds every ID it issued (service.LeaseHolder.LeaseState).
//
// With the database reachable, the row is renewed if it still carries
// st's token (then nobody claimed it since). With the database
// unreachable (a network error, not a refusal), the hold resumes on the
// validity and the mark the previous run saved, if the clock shows that
// validity still running: the claim cannot have lapsed before it. It
// returns nil, nil when st cannot be resumed: the caller claims anew.
func (l *Lease) resume(ctx context.Context, h service.LeaseHolder, st *leasekit.State) (*hold, error) {
	hd := newHold(st.Machine, st.Lease, st.ClaimMarkMs)
	hd.storedMark.Store(st.StoredMarkMs)
	t0 := h.Now()
	mark, ok, err := l.renewRow(ctx, hd)
	switch {
	case err == nil && !ok:
		l.o.Logger.Info("pglease: the machine id saved in the data dir was claimed by another node since; claiming anew (the same id preferred)",
			"machine", st.Machine)
		return nil, nil
	case err == nil:
		hd.validUntil.Store(t0 + int64(leasekit.Validity(l.o.TTL)))
		hd.storedMark.Store(max(hd.storedMark.Load(), mark))
	case !errors.As(err, new(unreachableError)):
		l.o.Logger.Warn("pglease: cannot check the machine id saved in the data dir; claiming anew", "machine", st.Machine, "err", err)
		return nil, nil
	default:
		valid := st.OfflineValidity(t0, l.o.Logger, "pglease", "PostgreSQL", err)
		if valid == 0 {
			return nil, nil
		}
		hd.validUntil.Store(valid)
		hd.offline.Store(true)
	}
	l.startRenewing(ctx, h, hd)
	l.setCurrent(hd)
	if err := h.Hold(ctx, hd.machine, hd.validUntil.Load(), hd.prevMark); err != nil {
		l.release(h, hd)
		return nil, fmt.Errorf("resuming machine %d: %w", hd.machine, err)
	}
	l.counters.Resumes.Add(1)
	l.held(h, hd)
	l.o.Logger.Info("pglease: machine id resumed from the data dir", "machine", hd.machine, "node", l.o.NodeName,
		"offline", hd.offline.Load())
	return hd, nil
}
