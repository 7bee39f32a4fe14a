package leasekit

import (
	"context"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/machineid"
)

// fleetLead is the largest lead (3 s + maxBorrow) of the fleet's nodes, as its
// layout record said at the last claim or resume, at least this node's: how far
// ahead of its clock a holder of the fleet's ids may issue.
func (e *Engine) fleetLead() time.Duration { return time.Duration(e.lead.Load()) }

// checkLayout joins the fleet's layout record before a claim or a resume: another
// layout refuses this node (*machineid.LayoutError); the leads are raised into fleetLead.
// With offline, no answer is no error: the saved claim resumes without it.
func (e *Engine) checkLayout(ctx context.Context, h machineid.Holder, offline bool) error {
	want := FleetLayout{Layout: h.Layout(), Lead: (h.Lead() + time.Millisecond - 1).Truncate(time.Millisecond)} // as stored
	e.raiseLead(want.Lead)
	bound := e.c.DialTimeout
	if offline { // the saved claim's validity is not spent here
		bound = attempt(e.c.TTL, bound)
	}
	lctx, cancel := outage.Bound(ctx, bound)
	got, err := e.joinLayout(lctx, want)
	cancel()
	switch {
	case offline && outage.Is(err):
		e.c.Logger.Warn(e.c.Provider+": cannot check the fleet's layout; resuming the claim saved in the data dir without it", "layout", e.c.Layout, "err", err)
		return nil
	case err != nil:
		return err
	case !got.Joins(want.Layout):
		return &machineid.LayoutError{Provider: e.c.Provider, Prefix: e.c.Prefix, Where: e.c.Layout, Fleet: got.Layout, Node: want.Layout}
	}
	e.raiseLead(got.Lead)
	return nil
}

// joinLayout returns the fleet's layout record, created as want if absent, its
// lead raised to want's if the layouts match: compare-and-swap until it holds.
func (e *Engine) joinLayout(ctx context.Context, want FleetLayout) (FleetLayout, error) {
	var old []byte // as read; nil: absent
	rec := want
	for range 16 {
		cur, err := e.b.SwapLayout(ctx, old, rec.record())
		if err != nil {
			return FleetLayout{}, err
		} else if cur == nil { // deleted meanwhile
			old, rec = nil, want
			continue
		}
		got, err := e.c.parseLayout(cur)
		if err != nil || !got.Joins(want.Layout) || want.Lead <= got.Lead {
			return got, err
		}
		old, rec = cur, got
		rec.Lead = want.Lead
	}
	return FleetLayout{}, fmt.Errorf("%s: writing the fleet's layout (%s): 16 writes in a row lost the race to other nodes", e.c.Provider, e.c.Layout)
}

// raiseLead is called by Run's goroutine only: no other writer.
func (e *Engine) raiseLead(d time.Duration) { e.lead.Store(max(e.lead.Load(), int64(d))) }
