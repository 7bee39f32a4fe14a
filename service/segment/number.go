package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

var _ intf.SegmentNumberer = (*Generator)(nil)

// How long a range of a period is served (NextNumber states both
// values; a test keeps them in step).
const (
	periodClockMargin = 100 * time.Millisecond
	periodDriftPPM    = 1000
)

// maxPeriodLoads bounds the ranges one NextNumber takes at a period's
// end, where a range may come too late to serve anything.
const maxPeriodLoads = 4

// numberTag is one period tag's allocator: the range it serves.
type numberTag struct {
	tag string
	f   *segstore.Format
	grp segstore.Grouping

	mu    sync.Mutex
	has   bool                 // r holds a range
	r     segstore.PeriodRange // the range served
	start time.Time            // r's period start
	next  int64                // the next number of r
	until time.Time            // r is served while the Clock reads before it
	// turn is when the database's clock has passed r's period's end, as
	// far as the node can tell (see load): a tag whose period is used up
	// refuses without a store call until then.
	turn   time.Time
	logged string // the last period whose used-up numbers were logged
}

// NextNumber returns the next number of the period tag tag, formatted:
// NextNumber(ctx, "order") → {Text: "ORD20261127000123", Period:
// "20261127", Seq: 123}. Numbers restart at 1 each period, the period
// read from the database's clock when a range is taken.
//
// A node asks the store for a range at its time sent and gets the
// database's time dbNow; at a later time T of the node the database's
// time is at most
//
//	dbNow + (T - sent) + 100ms + (T - sent) * 1000 / 1e6
//
// (a margin of 100ms and a drift of 1000 ppm cover the clocks' rates,
// which are never quite equal). The range is served only while that bound
// is before the period's end: so once the database's clock has passed
// the end — the only way a range of the next period can exist — no node
// issues a number of the ended period. Only time differences of the
// node's Settings.Clock are used: its wall time, right or wrong, plays
// no part. A range that arrives too late to serve anything makes the
// call wait on the Clock until the database's clock has surely passed
// the period's end (at most about the margin).
//
// Once a
// period's sequence would pass the format's {seq:N} width, the tag's calls
// fail with a *intf.PeriodExhaustedError (matching intf.ErrPeriodExhausted
// and segstore.ErrNumberOverflow) naming the tag, the period and the width, without
// a store call, until the database's clock has passed the period's end
// (the first such error of each period is logged). A tag is looked up at its
// first call (the period tags are reread on a miss, at most once per
// Settings.MissRefreshInterval, and every one read is registered), its
// format read then: restart the Generator after editing a tag's row.
func (g *Generator) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	if g.isClosed.Load() {
		return intf.SegmentNumber{}, intf.ErrClosed
	}
	if err := intf.CheckTag(tag); err != nil {
		return intf.SegmentNumber{}, err
	}
	ps, err := segstore.PeriodStoreOf(g.s.Store)
	if err != nil {
		return intf.SegmentNumber{}, fmt.Errorf("period tag %q: %w: %w", tag, intf.ErrUnknownTag, err)
	}
	nt, err := g.numberTag(ctx, ps, tag)
	if err != nil {
		return intf.SegmentNumber{}, err
	}
	return nt.take(ctx, g, ps)
}

// take serves the next number, taking a new range when the one held is
// used up or may belong to a period that has ended.
func (nt *numberTag) take(ctx context.Context, g *Generator, ps segstore.PeriodStore) (intf.SegmentNumber, error) {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	for loads := 0; ; loads++ {
		now := g.now()
		if nt.has && nt.next > nt.f.MaxSeq() && now.Before(nt.turn) {
			return intf.SegmentNumber{}, nt.exhausted(g, now)
		}
		if nt.has && nt.next < nt.r.End && now.Before(nt.until) {
			seq := nt.next
			nt.next++
			text, err := nt.f.Render(nt.start, seq)
			if err != nil {
				return intf.SegmentNumber{}, fmt.Errorf("period tag %q: period %s: format %q: %w", nt.tag, nt.r.Period, nt.f, err)
			}
			return intf.SegmentNumber{Text: text, Period: nt.r.Period, Seq: seq}, nil
		}
		if loads == maxPeriodLoads {
			return intf.SegmentNumber{}, fmt.Errorf("period tag %q: period %s is ending: no range could be served before the database's clock passes %s: %w",
				nt.tag, nt.r.Period, nt.r.PeriodEnd.Format(time.RFC3339), intf.ErrUnavailable)
		}
		if err := nt.load(ctx, g, ps); err != nil {
			return intf.SegmentNumber{}, err
		}
	}
}

// load takes a range from the store. A range that arrives too late to
// serve anything (the period ends within the margin) is kept as used up,
// after waiting until the database's clock has surely passed the end, so
// that the next load takes the next period's range.
func (nt *numberTag) load(ctx context.Context, g *Generator, ps segstore.PeriodStore) error {
	sent := g.now()
	lctx, cancel := context.WithTimeout(ctx, g.s.LoadTimeout)
	r, err := ps.AllocPeriod(lctx, nt.tag, 0)
	cancel()
	recv := g.now()
	switch {
	case errors.Is(err, intf.ErrUnknownTag), errors.Is(err, segstore.ErrMaxIdOverflow), ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case err != nil:
		return fmt.Errorf("period tag %q: taking a range: %w (%w)", nt.tag, intf.ErrUnavailable, err)
	case r.Start < 1 || r.End <= r.Start:
		return fmt.Errorf("period tag %q: the store returned the range [%d, %d) of period %s: was vesta_period_alloc edited? refusing it: %w",
			nt.tag, r.Start, r.End, r.Period, intf.ErrUnavailable)
	case nt.has && r.Period == nt.r.Period && r.Start < nt.r.End:
		// The ranges of a period only grow: one below the last held means
		// vesta_period_alloc went back (a restore, a failover to a lagging
		// standby), and its numbers were issued already.
		return fmt.Errorf("period tag %q: the store returned [%d, %d) of period %s, below the range held, which ended at %d: was vesta_period_alloc restored or failed over to a lagging standby? refusing it: %w",
			nt.tag, r.Start, r.End, r.Period, nt.r.End, intf.ErrUnavailable)
	case nt.has && r.Period < nt.r.Period:
		return fmt.Errorf("period tag %q: the store returned a range of period %s after one of %s: the database's clock went back; refusing it: %w",
			nt.tag, r.Period, nt.r.Period, intf.ErrUnavailable)
	}
	start, err := nt.grp.Start(r.Period)
	if err != nil {
		return fmt.Errorf("period tag %q: %w: %w", nt.tag, intf.ErrUnavailable, err)
	}
	left := r.PeriodEnd.Sub(r.DBNow)
	serve := left - periodClockMargin
	serve -= serve / (1e6/periodDriftPPM + 1) // serve*(1+drift) + margin = left
	// At the clocks' nominal rates the database's clock is past the end
	// from recv + left on: a used-up period is asked again from then (the
	// drift's bound below, a thousandth of the period, would refuse the
	// next period's first minute; a database still in the old period
	// then costs one range of it, whose left is a sliver of this one's).
	nt.has, nt.r, nt.start, nt.next, nt.until = true, r, start, r.Start, sent.Add(serve)
	nt.turn = recv.Add(left)
	if recv.Before(nt.until) {
		return nil
	}
	// The database's clock reads at least dbNow + (T - recv) * (1 - drift)
	// at local time T: wait until that is past the end.
	past := recv.Add(left + left/(1e6/periodDriftPPM-1) + time.Millisecond)
	return g.s.Clock.WaitUntil(ctx, past.UnixNano())
}

// exhausted is the error of a tag whose range held is past its format's
// width: its period's numbers are used up. The first in each period is
// logged.
func (nt *numberTag) exhausted(g *Generator, now time.Time) error {
	e := &intf.PeriodExhaustedError{Tag: nt.tag, Period: nt.r.Period, Width: nt.f.Width(), Max: nt.f.MaxSeq(),
		Ends: nt.r.PeriodEnd, RetryAfter: nt.turn.Sub(now)}
	if nt.logged != nt.r.Period {
		nt.logged = nt.r.Period
		g.s.Logger.Error("segment: a period tag has used up its period's numbers; it issues none until the next period: widen its format's {seq:N}",
			"tag", nt.tag, "period", nt.r.Period, "format", nt.f.String(), "max", nt.f.MaxSeq(), "periodEnd", nt.r.PeriodEnd.Format(time.RFC3339))
	}
	return e
}
