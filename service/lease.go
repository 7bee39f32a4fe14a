package service

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

// leaseHolder implements machineid.Holder for a Service.
type leaseHolder struct{ s *Service }

func (h leaseHolder) Now() int64 { return h.s.settings.Clock.NowNanos() }

func (h leaseHolder) Lead() time.Duration { return h.s.lead() }

func (h leaseHolder) Layout() machineid.Layout { return h.s.settings.layout() }

func (h leaseHolder) Hold(ctx context.Context, machine, validUntil, prevMarkMs int64) error {
	s := h.s
	if err := intf.CheckRange("machine", machine, 0, intf.MaxMachine); err != nil {
		return err
	}
	closed := false
	s.update(func(b *bounds) { b.fence, closed = -1, b.closed })
	if closed {
		return intf.ErrClosed
	}
	if err := s.checkMark(prevMarkMs); err != nil {
		return fmt.Errorf("%w: the previous holder's mark of machine %d: %w", ErrCorruptMark, machine, err)
	}
	floor := int64(-1)
	if prevMarkMs > 0 {
		floor = s.floorOf(prevMarkMs)
	}
	// The unit after floor is handed out at once when it begins within the
	// lead, as after a restart (a resumed hold starts above now + lead),
	// if it ends within the validity; else the fence would refuse it: wait
	// for it, renewals meanwhile moving the fence.
	near := s.lead() + time.Duration(s.units.unitNanos)
	if s.units.epochNanos+(floor+2)*s.units.unitNanos > validUntil {
		near = 0
	}
	if err := s.waitNear(ctx, floor, prevMarkMs, fmt.Sprintf("the previous holder of machine %d", machine), near); err != nil {
		return err
	}
	s.pop.raise(floor)
	// Renewals that came while Hold waited count too.
	validUntil = s.extendValidity(validUntil)
	_, ahead := s.leaseMarkAhead(0)
	if err := s.settings.Lease.StoreMark(ctx, machine, ahead); err != nil {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, err)
	}
	// Close may have begun meanwhile: then the machine id Close read stays
	// in force and this hold is refused (the mark just stored is ahead:
	// safe), so that Close never stores its exact mark for another id.
	s.update(func(b *bounds) {
		if closed = b.closed; closed {
			return
		}
		b.machine = machine
		b.tenure++
		b.leaseMark = s.unitOf(ahead)
		b.fence = s.fenceUnit(validUntil)
		s.marks.lease.Store(ahead)
	})
	if closed {
		return intf.ErrClosed
	}
	// The lease logs the hold, with its details (etcdlease: node, previous
	// mark): here only at debug level, so that an operator reads it once.
	s.settings.Logger.Debug("vesta: machine id held", "machine", machine)
	select {
	case s.firstHold <- nil:
	default:
	}
	return nil
}

func (h leaseHolder) Renewed(validUntil int64) {
	validUntil = h.s.extendValidity(validUntil)
	h.s.update(func(b *bounds) {
		if b.fence >= 0 {
			b.fence = h.s.fenceUnit(validUntil)
		}
	})
	select { // let the background store the lease mark up to it at once
	case h.s.marks.renewed <- struct{}{}:
	default:
	}
}

func (h leaseHolder) LeaseState() []byte { return slices.Clone(h.s.leaseState) }

func (h leaseHolder) SaveLeaseState(b []byte) error {
	if h.s.dir == nil {
		return nil
	}
	return h.s.dir.writeLeaseState(b)
}

func (h leaseHolder) Lost() {
	s := h.s
	s.validUntil.Store(0)
	wasHeld := false
	s.update(func(b *bounds) {
		wasHeld = b.held()
		b.fence = -1
	})
	if wasHeld {
		s.events.fences.Add(1)
		// The lease logs the loss, with why (see Hold).
		s.settings.Logger.Debug("vesta: machine id lease lost; not issuing until an id is held again")
	}
}

// extendValidity records v as the lease's validity when it is later than
// the one recorded, and returns the validity in force.
func (s *Service) extendValidity(v int64) int64 {
	for {
		cur := s.validUntil.Load()
		if cur >= v {
			return cur
		}
		if s.validUntil.CompareAndSwap(cur, v) {
			return v
		}
	}
}

// leaseMarkAhead is the lease mark the service needs stored now (need),
// and what it stores when the stored one is below that (store): ahead of
// the clock, and keep past the lease's validity, then step further (see
// machineid.MarkSpan). IDs are fenced at the validity, so a stored mark that
// covers it — and the validity the next renewal sets, which comes before
// the write after it — lets the node issue through an outage for as long
// as its lease is surely valid, while the marks stay one write per step.
func (s *Service) leaseMarkAhead(wallNanos int64) (need, store int64) {
	need = max(s.aheadMillis(wallNanos), (s.validUntil.Load()+int64(s.marks.keep))/int64(time.Millisecond))
	return need, need + s.marks.step.Milliseconds()
}

// fenceUnit is the last time unit that ends before validUntil: an ID in it
// was issued while the lease was surely valid.
func (s *Service) fenceUnit(validUntil int64) int64 {
	return (validUntil-s.units.epochNanos)/s.units.unitNanos - 1
}

// runLease runs the lease until Close and reports its end.
func (s *Service) runLease(ctx context.Context) {
	defer close(s.life.leaseDone)
	err := s.settings.Lease.Run(ctx, leaseHolder{s})
	if ctx.Err() == nil {
		s.settings.Logger.Error("vesta: machine id lease stopped", "err", err)
		leaseHolder{s}.Lost()
		select {
		case s.firstHold <- err:
		default:
		}
	}
}

// storeLeaseMark stores the lease mark for the machine held, then raises
// the limit. Call it only while an id is held.
func (s *Service) storeLeaseMark(ctx context.Context, ms int64) error {
	is := s.cur.Load()
	ctx, cancel := context.WithTimeout(ctx, markInterval)
	defer cancel()
	if err := s.settings.Lease.StoreMark(ctx, is.machine, ms); err != nil {
		return err
	}
	s.marks.lease.Store(ms)
	s.update(func(b *bounds) {
		if b.machine == is.machine {
			b.leaseMark = s.unitOf(ms)
		}
	})
	return nil
}
