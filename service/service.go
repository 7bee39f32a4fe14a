package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

// Service is the embedded ID generator. It implements intf.IdService and is
// safe for concurrent use. Call Close when done so that the exact last time
// is stored and the data directory is unlocked.
type Service struct {
	settings Settings
	layout   intf.Layout
	units    *units
	pop      populator

	cur atomic.Pointer[issuance] // what GenId reads
	mu  sync.Mutex               // guards b and publishing cur
	b   bounds

	dir        *dataDir
	leaseState []byte       // the lease's state from the data dir's previous run
	validUntil atomic.Int64 // the lease's latest validity (clock nanos), 0 when lost
	firstHold  chan error   // the lease's first hold, or why there is none
	marks      marks
	events     struct{ fences, clockBack atomic.Uint64 } // for Stats
	life       lifecycle
}

// marks are the time high-water marks the service knows of, in Unix ms:
// what Stats reports and the background stores from. bounds holds the
// same limits in time units, for the issuance.
type marks struct {
	file  atomic.Int64 // the data dir's
	min   atomic.Int64 // no mark is stored below it (coverMillis)
	lease atomic.Int64 // the lease's
	// failures counts failed stores of a mark (file or lease); failing is
	// set while the last one of either failed.
	failures atomic.Uint64
	failing  atomic.Bool
	renewed  chan struct{} // a lease renewal asks the background to store marks now
	// keep and step: the lease mark is kept at least keep ahead of the
	// lease's validity, and stored step further (machineid.MarkSpan).
	keep, step time.Duration
}

// lifecycle is the service's background goroutine and lease runner, and
// how Close ends them once.
type lifecycle struct {
	stop      context.CancelFunc
	closing   context.CancelFunc // ends every wait for the next unit
	done      chan struct{}      // the background goroutine ended
	leaseStop context.CancelFunc
	leaseDone chan struct{} // the lease runner ended
	closeOnce sync.Once
	closeErr  error
}

var _ intf.IdService = (*Service)(nil)

// New validates s, resolves the machine id, checks the clock against the
// time high-water mark (waiting up to s.MaxClockBackwardWait for it to
// pass), stores a new mark and returns a ready Service. With s.Lease set,
// it also waits until the lease holds a machine id.
func New(ctx context.Context, s Settings) (*Service, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, err
	}
	if s.MachineProvider != nil && s.Lease == nil {
		if s.Machine, err = s.MachineProvider.MachineId(ctx); err != nil {
			return nil, fmt.Errorf("machine id: %w", err)
		}
		if err := intf.CheckRange("machine", s.Machine, 0, intf.MaxMachine); err != nil {
			return nil, err
		}
	}
	layout, _ := s.Type.Layout() // s.Type was validated
	closingCtx, closing := context.WithCancel(context.Background())
	svc := &Service{
		settings: s,
		layout:   layout,
		units: &units{
			clock:      s.Clock,
			epochNanos: s.EpochMillis * int64(time.Millisecond),
			unitNanos:  int64(layout.Unit),
			maxSeq:     layout.Seq.Max(),
			borrow:     int64(s.MaxBorrow / layout.Unit),
			catchUp:    int64(catchUpWindow / layout.Unit),
			closing:    closingCtx,
		},
		life:      lifecycle{closing: closing, done: make(chan struct{}), leaseDone: make(chan struct{})},
		b:         noBounds(s.Machine),
		firstHold: make(chan error, 1),
		marks:     marks{renewed: make(chan struct{}, 1)},
	}
	if s.Lease != nil {
		svc.b.fence = -1 // nothing is issued until the lease holds an id
		if sp, ok := s.Lease.(machineid.MarkSpan); ok {
			keep, step := sp.MarkSpan()
			svc.marks.keep, svc.marks.step = max(keep, 0), max(step, 0)
		}
	}
	svc.update(func(*bounds) {})
	if err := svc.checkLifetime(); err != nil {
		return nil, err
	}
	floor := int64(-1)
	if s.NoDataDir {
		s.Logger.Warn("vesta: running without a data dir: a restart with the clock behind the previous run can repeat IDs")
	} else if floor, err = svc.openMark(ctx); err != nil {
		return nil, err
	}
	start := svc.units.raised(state{last: -1, seq: svc.units.maxSeq}, floor)
	if svc.pop, err = newPopulator(s.Populator, svc.units, start); err != nil {
		svc.closeDir()
		return nil, err
	}
	bgCtx, stop := context.WithCancel(context.Background())
	svc.life.stop = stop
	go svc.background(bgCtx)
	if s.Lease == nil {
		close(svc.life.leaseDone)
		return svc, nil
	}
	leaseCtx, leaseStop := context.WithCancel(context.Background())
	svc.life.leaseStop = leaseStop
	go svc.runLease(leaseCtx)
	select {
	case err = <-svc.firstHold:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		svc.Close()
		return nil, fmt.Errorf("machine id lease: %w", err)
	}
	return svc, nil
}

// checkLifetime refuses a clock outside the layout's time field and warns
// when less than a year of it is left.
func (s *Service) checkLifetime() error {
	nowMs := s.settings.Clock.NowNanos() / int64(time.Millisecond)
	if nowMs < s.settings.EpochMillis {
		return fmt.Errorf("%w: the clock (%s) is before the epoch (%s)", intf.ErrTimeOverflow,
			time.UnixMilli(nowMs).UTC(), time.UnixMilli(s.settings.EpochMillis).UTC())
	}
	end := time.UnixMilli(s.settings.EpochMillis + (s.layout.Time.Max()+1)*s.layout.Unit.Milliseconds()).UTC()
	left := end.Sub(time.UnixMilli(nowMs))
	if left <= 0 {
		return fmt.Errorf("%w: the %s time field ran out at %s: choose a later epoch", intf.ErrTimeOverflow, s.settings.Type, end)
	}
	if left < 365*24*time.Hour {
		s.settings.Logger.Warn("vesta: the time field runs out soon", "type", s.settings.Type.String(), "end", end, "left", left.Round(time.Hour))
	}
	return nil
}

// GenId issues one ID. It allocates nothing beyond what the populator
// strategy needs and does no I/O. It never returns an ID once ctx is done.
func (s *Service) GenId(ctx context.Context) (intf.Id, error) {
	is := s.cur.Load()
	unit, seq, _, err := s.pop.reserve(ctx, 1)
	if err != nil {
		return 0, err
	}
	// Close stores the last unit the populator handed out as the exact
	// mark: a unit reserved after Close read it must fail, so the limit in
	// force now counts as well as the one loaded before reserving.
	if now := s.cur.Load(); unit > is.limit || unit > now.limit {
		if is, err = s.admit(is, now, unit); err != nil {
			return 0, err
		}
	}
	if err := doneErr(ctx); err != nil {
		return 0, err
	}
	// Field.Put without its mask: unit ≤ the limit ≤ the time field's
	// maximum, and seq ≤ the sequence's, so the hot path skips the ANDs.
	return intf.Id(is.fixed | uint64(unit)<<s.layout.Time.Shift | uint64(seq)<<s.layout.Seq.Shift), nil
}

// admit decides a unit reserved under snapshot is that is above is's limit
// or the current one's (now). A caller that waited long may hold a
// snapshot whose limit was raised since (the marks move every second):
// when no hold began in between (same tenure: same machine id, and no
// raise of the populator since), the current limit is the one that counts,
// so the caller is not refused for a limit the present state no longer
// has. Otherwise the present state's error is returned.
func (s *Service) admit(is, now *issuance, unit int64) (*issuance, error) {
	if now.tenure == is.tenure && unit <= now.limit {
		return now, nil
	}
	if unit > now.limit {
		return nil, now.errAt(unit, s)
	}
	// A new hold began after this unit was reserved under the previous
	// one: the unit may lie below the new holder's floor. Refuse it; a
	// retry takes a unit above the floor.
	return nil, fmt.Errorf("%w: the machine id changed hands while the call waited: retry", intf.ErrUnavailable)
}

// doneErr is ctx's error once it is done. It asks Err, not Done: a
// context may make its timer only when Done is asked (a server's call
// timeout, ctxtime.Deadline), which a call that does not wait should not
// cost.
func doneErr(ctx context.Context) error {
	return ctx.Err()
}

// GenIds issues n IDs, 1 <= n <= intf.MaxBatch, in increasing order. It
// takes whole runs of sequence numbers from the populator at once.
func (s *Service) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	if err := intf.CheckRange("count", int64(n), 1, intf.MaxBatch); err != nil {
		return nil, err
	}
	ids := make([]intf.Id, 0, n)
	for len(ids) < n {
		is := s.cur.Load()
		unit, first, got, err := s.pop.reserve(ctx, int64(n-len(ids)))
		if err != nil {
			return nil, err
		}
		if now := s.cur.Load(); unit > is.limit || unit > now.limit { // see GenId
			if is, err = s.admit(is, now, unit); err != nil {
				return nil, err
			}
		}
		if len(ids) > 0 && is.fixed != uint64(ids[0])&^s.varBits() {
			// The machine id changed between two runs of this batch.
			return nil, fmt.Errorf("%w: the machine id changed hands during the batch: retry", intf.ErrUnavailable)
		}
		base := is.fixed | uint64(unit)<<s.layout.Time.Shift
		for seq := first; seq < first+got; seq++ {
			ids = append(ids, intf.Id(base|uint64(seq)<<s.layout.Seq.Shift))
		}
	}
	if err := doneErr(ctx); err != nil {
		return nil, err
	}
	return ids, nil
}

// varBits are the bits of the time and sequence fields: what differs
// between two IDs of one machine id.
func (s *Service) varBits() uint64 { return mask(s.layout.Time) | mask(s.layout.Seq) }

// mask selects a field's bits inside an ID.
func mask(f intf.Field) uint64 { return uint64(f.Max()) << f.Shift }

// ExpId splits an ID into its fields by the layout its type bit names.
func (s *Service) ExpId(_ context.Context, id intf.Id) (intf.IdFields, error) {
	return id.Fields(), nil
}

// MakeId packs the request's fields, taking omitted ones from the
// settings. A field out of range is an *intf.FieldError naming it.
func (s *Service) MakeId(_ context.Context, r intf.MakeIdRequest) (intf.Id, error) {
	id := intf.IdFields{Time: r.Time, Seq: r.Seq, Machine: s.machine(), GenMethod: s.settings.GenMethod,
		Type: int64(s.settings.Type), Version: s.settings.Version}
	for _, f := range []struct {
		dst *int64
		src *int64
	}{{&id.Machine, r.Machine}, {&id.GenMethod, r.GenMethod}, {&id.Type, r.Type}, {&id.Version, r.Version}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	made, _, err := intf.Encode(id)
	return made, err
}

// TransTime turns the time field of an ID of type t into a UTC time.
func (s *Service) TransTime(_ context.Context, timeField int64, t intf.IdType) (time.Time, error) {
	l, err := t.Layout()
	if err != nil {
		return time.Time{}, err
	}
	if err := intf.CheckRange("time", timeField, 0, l.Time.Max()); err != nil {
		return time.Time{}, err
	}
	return l.Instant(s.settings.EpochMillis, timeField), nil
}

// machine is the machine id in use (with a lease, the one last held).
func (s *Service) machine() int64 { return s.cur.Load().machine }

// Settings returns the settings in force, with defaults filled in and the
// machine id resolved.
func (s *Service) Settings() Settings {
	st := s.settings
	st.Machine = s.machine()
	return st
}

// Stats are counters for monitoring.
type Stats struct {
	// ExhaustionWaits counts the times a time unit's sequence ran out and a
	// caller waited for the next unit: once per call and used-up unit,
	// however many tries its wait took.
	ExhaustionWaits uint64
	// ClockBackEvents counts the times the wall clock was seen to step
	// back by more than a second (the IDs were not affected).
	ClockBackEvents uint64
	// HighWaterMillis is the mark stored in the data dir, in Unix
	// milliseconds (0 without a data dir).
	HighWaterMillis int64
	// Machine is the machine id in use.
	Machine int64
	// LeaseHeld reports whether a machine id lease is held and surely
	// valid now, so that IDs of the current time unit may be issued
	// (always true without a lease). It turns false the moment the node is
	// fenced — the lease lost, or not renewed in time (e.g. etcd
	// unreachable) — and true again when a renewal or a new hold lets it
	// issue. Fences counts the times a held lease was lost.
	LeaseHeld bool
	Fences    uint64
	// LeaseMarkMillis is the mark stored with the lease (0 without one).
	LeaseMarkMillis int64
	// LeaseLeftMillis is how long the lease is surely valid from now, as
	// its last renewal measured it on the service clock: what is left of
	// its TTL before the node fences itself (0 without a lease, and once
	// it is lost or ran out).
	LeaseLeftMillis int64
	// Lease are the lease's own counters, when it keeps them (etcdlease
	// does: it implements interface{ Stats() machineid.LeaseStats }).
	Lease machineid.LeaseStats
	// AheadMillis is how far the last time unit handed out begins after
	// the clock (0 when it does not): a restart's first unit, or a burst
	// borrowing with MaxBorrow.
	AheadMillis int64
	// MarkWriteFailures counts the failed stores of a high-water mark (in
	// the data dir or with the lease); MarkFailing is true while the last
	// store of either failed: IDs stop once the clock reaches the mark
	// stored last (intf.ErrNotPersisted).
	MarkWriteFailures uint64
	MarkFailing       bool
}

// Stats returns the current counters.
func (s *Service) Stats() Stats {
	st := Stats{
		ExhaustionWaits: s.units.waits.Load(),
		ClockBackEvents: s.events.clockBack.Load(),
		HighWaterMillis: s.marks.file.Load(),
		Machine:         s.machine(),
		LeaseHeld:       s.leaseValidNow(),
		Fences:          s.events.fences.Load(),
		LeaseMarkMillis: s.marks.lease.Load(),
		LeaseLeftMillis: s.leaseLeft(),
		AheadMillis:     s.aheadOfClock(),

		MarkWriteFailures: s.marks.failures.Load(),
		MarkFailing:       s.marks.failing.Load(),
	}
	if r, ok := s.settings.Lease.(interface{ Stats() machineid.LeaseStats }); ok {
		st.Lease = r.Stats()
	}
	return st
}

// aheadOfClock is Stats.AheadMillis.
func (s *Service) aheadOfClock() int64 {
	if s.pop == nil {
		return 0
	}
	start := s.units.epochNanos + s.pop.lastUnit()*s.units.unitNanos
	return max(0, start-s.settings.Clock.NowNanos()) / int64(time.Millisecond)
}

// leaseLeft is Stats.LeaseLeftMillis.
func (s *Service) leaseLeft() int64 {
	v := s.validUntil.Load()
	if s.settings.Lease == nil || v == 0 {
		return 0
	}
	return max(0, v-s.settings.Clock.NowNanos()) / int64(time.Millisecond)
}

// leaseValidNow tells whether the machine id lease lets the current time
// unit be issued: held, and not past its fence.
func (s *Service) leaseValidNow() bool {
	if s.settings.Lease == nil {
		return true
	}
	is := s.cur.Load()
	return is.held() && s.units.now() <= is.fence
}

// Close stops issuing IDs, stores the exact last time unit issued as the
// mark (so a restart need not wait out the lead), releases the lease and
// unlocks the data dir. Calls after the first return the first result.
func (s *Service) Close() error {
	s.life.closeOnce.Do(func() {
		s.life.stop()
		<-s.life.done
		// Every GenId from here on fails its limit check; end the waits
		// for the next unit too, so that no caller holds the populator
		// (and lastUnit below) for as long as it would have waited.
		s.life.closing()
		// With the background writer stopped, nothing raises the limit
		// again: from here on every GenId fails its limit check, so the
		// last unit read below is the last one ever issued.
		// The machine id and whether it is held are read with closed set:
		// a Hold after this is refused, so they stay the ones the last
		// IDs were issued with.
		var machine int64
		held := false
		s.update(func(b *bounds) { b.closed, machine, held = true, b.machine, b.held() })
		last := s.pop.lastUnit()
		if last >= 0 {
			ms := s.settings.EpochMillis + last*s.layout.Unit.Milliseconds()
			if s.dir != nil {
				if s.life.closeErr = s.dir.writeMark(ms); s.life.closeErr == nil {
					s.marks.file.Store(ms)
				}
			}
			if s.settings.Lease != nil && held {
				// If the lease was lost and the id taken again since, the
				// lease refuses this mark or keeps it above the previous
				// holder's (see machineid.Lease.StoreMark).
				ctx, cancel := context.WithTimeout(context.Background(), markInterval)
				if err := s.settings.Lease.StoreMark(ctx, machine, ms); s.life.closeErr == nil {
					s.life.closeErr = err
				}
				cancel()
			}
		} else if s.dir != nil {
			// Nothing was ever issued with this data dir: drop the mark
			// stored ahead, so a quick restart need not wait it out.
			if s.life.closeErr = s.dir.removeMark(); s.life.closeErr == nil {
				s.marks.file.Store(0)
			}
		}
		if s.life.leaseStop != nil {
			s.life.leaseStop()
		}
		<-s.life.leaseDone
		if err := s.closeDir(); s.life.closeErr == nil {
			s.life.closeErr = err
		}
	})
	return s.life.closeErr
}

func (s *Service) closeDir() error {
	if s.dir == nil {
		return nil
	}
	err := s.dir.close()
	s.dir = nil
	return err
}
