package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Timing of the high-water mark: every markInterval the mark is stored at
// now+markLead, so the hot path finds the mark ahead of the clock as long
// as writes keep succeeding.
const (
	markInterval = time.Second
	markLead     = 3 * time.Second
	// clockBackThreshold is how far the wall clock may lag before a
	// clock-back event is logged and counted.
	clockBackThreshold = time.Second
)

// Service is the embedded ID generator. It implements intf.IdService and is
// safe for concurrent use. Call Close when done so that the exact last time
// is stored and the data directory is unlocked.
type Service struct {
	settings  Settings
	layout    intf.Layout
	fixed     uint64 // machine, genMethod, type and version bits
	units     *units
	pop       populator
	unitMilli int64
	maxUnit   int64
	// limit is the largest time unit that may be issued: the persisted mark
	// or the layout's last unit, whichever is lower; -1 once closed.
	limit  atomic.Int64
	markMs atomic.Int64

	dir       *dataDir
	clockBack atomic.Uint64
	closed    atomic.Bool
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

var _ intf.IdService = (*Service)(nil)

// New validates s, resolves the machine id, checks the clock against the
// time high-water mark (waiting up to s.MaxClockBackwardWait for it to
// pass), stores a new mark and returns a ready Service.
func New(ctx context.Context, s Settings) (*Service, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	if s.MachineProvider != nil {
		if s.Machine, err = s.MachineProvider.MachineId(ctx); err != nil {
			return nil, fmt.Errorf("machine id: %w", err)
		}
		if err := intf.CheckRange("machine", s.Machine, 0, intf.MaxMachine); err != nil {
			return nil, err
		}
	}
	layout, _ := s.Type.Layout() // s.Type was validated
	svc := &Service{
		settings: s,
		layout:   layout,
		fixed: uint64(s.Machine) | uint64(s.GenMethod)<<layout.GenMethod.Shift |
			uint64(s.Type)<<layout.TypeBit.Shift | uint64(s.Version)<<layout.Version.Shift,
		units: &units{
			clock:      s.Clock,
			epochNanos: s.EpochMillis * int64(time.Millisecond),
			unitNanos:  int64(layout.Unit),
			maxSeq:     layout.Seq.Max(),
		},
		unitMilli: layout.Unit.Milliseconds(),
		maxUnit:   layout.Time.Max(),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if err := svc.checkLifetime(); err != nil {
		return nil, err
	}
	start := state{last: -1, seq: svc.units.maxSeq}
	if s.NoDataDir {
		s.Logger.Warn("vesta: running without a data dir: a restart with the clock behind the previous run can repeat IDs")
		svc.limit.Store(svc.maxUnit)
	} else {
		if start.last, err = svc.openMark(ctx); err != nil {
			return nil, err
		}
	}
	if svc.pop, err = newPopulator(s.Populator, svc.units, start); err != nil {
		svc.closeDir()
		return nil, err
	}
	go svc.background()
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
	end := time.UnixMilli(s.settings.EpochMillis + (s.maxUnit+1)*s.unitMilli).UTC()
	left := end.Sub(time.UnixMilli(nowMs))
	if left <= 0 {
		return fmt.Errorf("%w: the %s time field ran out at %s: choose a later epoch", intf.ErrTimeOverflow, s.settings.Type, end)
	}
	if left < 365*24*time.Hour {
		s.settings.Logger.Warn("vesta: the time field runs out soon", "type", s.settings.Type.String(), "end", end, "left", left.Round(time.Hour))
	}
	return nil
}

// openMark locks the data dir, makes sure the clock is past the stored
// mark, and stores a mark ahead of the clock. It returns the unit the
// populator must start above.
func (s *Service) openMark(ctx context.Context) (floor int64, err error) {
	if s.dir, err = openDataDir(s.settings.DataDir); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			s.closeDir()
		}
	}()
	mark, ok, err := s.dir.readMark()
	if err != nil {
		return 0, err
	}
	floor = -1
	if ok {
		floor = s.unitOf(mark)
		resume := s.units.epochNanos + (floor+1)*s.units.unitNanos
		gap := time.Duration(resume - s.settings.Clock.NowNanos())
		if gap > s.settings.MaxClockBackwardWait {
			return 0, fmt.Errorf("%w: the clock is %s behind the last time IDs may have been issued at (%s, stored in %s), more than maxClockBackwardWait %s: fix the clock, or raise maxClockBackwardWait to wait it out",
				intf.ErrClockBehind, gap.Round(time.Millisecond), time.UnixMilli(mark).UTC(), s.dir.markPath(), s.settings.MaxClockBackwardWait)
		}
		if gap > 0 {
			s.settings.Logger.Info("vesta: waiting for the clock to pass the high-water mark", "wait", gap)
			if err := s.settings.Clock.WaitUntil(ctx, resume); err != nil {
				return 0, err
			}
		}
	}
	if err := s.persistAhead(0); err != nil {
		return 0, err
	}
	return floor, nil
}

// unitOf is the time unit containing Unix millisecond ms (floored).
func (s *Service) unitOf(ms int64) int64 {
	d := ms - s.settings.EpochMillis
	u := d / s.unitMilli
	if d < 0 && d%s.unitMilli != 0 {
		u--
	}
	return u
}

// persistAhead stores a mark markLead ahead of the clock — or of the wall
// clock, when that is ahead and the clock is about to follow it — then lets
// the hot path issue up to it.
func (s *Service) persistAhead(wallNanos int64) error {
	ms := (max(s.settings.Clock.NowNanos(), wallNanos) + int64(markLead)) / int64(time.Millisecond)
	if err := s.dir.writeMark(ms); err != nil {
		return err
	}
	s.markMs.Store(ms)
	if !s.closed.Load() {
		s.limit.Store(min(s.maxUnit, s.unitOf(ms)))
	}
	return nil
}

// resyncer is a clock that can follow the wall clock forward (SystemClock).
type resyncer interface{ Resync() (wallBehind time.Duration) }

// background keeps the mark ahead of the clock and lets the clock follow
// the wall clock forward. The mark is stored first, so a clock that jumps
// forward never finds the mark behind it.
func (s *Service) background() {
	defer close(s.done)
	t := time.NewTicker(markInterval)
	defer t.Stop()
	resync, _ := s.settings.Clock.(resyncer)
	var markFailing, wallBehind bool
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		var wall int64
		if resync != nil {
			wall = time.Now().UnixNano()
		}
		if s.dir != nil {
			err := s.persistAhead(wall)
			if err != nil && !markFailing {
				s.settings.Logger.Error("vesta: cannot store the time high-water mark; IDs stop when it falls behind the clock", "err", err)
			} else if err == nil && markFailing {
				s.settings.Logger.Info("vesta: time high-water mark stored again")
			}
			markFailing = err != nil
		}
		if resync != nil {
			behind := resync.Resync()
			if behind > clockBackThreshold && !wallBehind {
				s.clockBack.Add(1)
				s.settings.Logger.Warn("vesta: the wall clock moved back; IDs keep the monotonic time", "behind", behind)
			}
			wallBehind = behind > clockBackThreshold
		}
	}
}

// GenId issues one ID. It allocates nothing beyond what the populator
// strategy needs and does no I/O.
func (s *Service) GenId(ctx context.Context) (int64, error) {
	unit, seq, _, err := s.pop.reserve(ctx, 1)
	if err != nil {
		return 0, err
	}
	if unit > s.limit.Load() {
		return 0, s.limitErr(unit)
	}
	return int64(s.fixed | uint64(unit)<<s.layout.Time.Shift | uint64(seq)<<s.layout.Seq.Shift), nil
}

// GenIds issues n IDs, 1 <= n <= intf.MaxBatch, in increasing order. It
// takes whole runs of sequence numbers from the populator at once.
func (s *Service) GenIds(ctx context.Context, n int) ([]int64, error) {
	if err := intf.CheckRange("count", int64(n), 1, intf.MaxBatch); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, n)
	for len(ids) < n {
		unit, first, got, err := s.pop.reserve(ctx, int64(n-len(ids)))
		if err != nil {
			return nil, err
		}
		if unit > s.limit.Load() {
			return nil, s.limitErr(unit)
		}
		base := s.fixed | uint64(unit)<<s.layout.Time.Shift
		for seq := first; seq < first+got; seq++ {
			ids = append(ids, int64(base|uint64(seq)<<s.layout.Seq.Shift))
		}
	}
	return ids, nil
}

func (s *Service) limitErr(unit int64) error {
	switch {
	case s.closed.Load():
		return intf.ErrClosed
	case unit > s.maxUnit:
		return fmt.Errorf("%w: time unit %d exceeds the %s field's maximum %d", intf.ErrTimeOverflow, unit, s.settings.Type, s.maxUnit)
	}
	return fmt.Errorf("%w: the mark in %s is at %s, behind the clock: is the data dir writable?",
		intf.ErrNotPersisted, s.settings.DataDir, time.UnixMilli(s.markMs.Load()).UTC())
}

// ExpId splits an ID into its fields by the layout its type bit names.
func (s *Service) ExpId(_ context.Context, id int64) (intf.Id, error) { return decode(id), nil }

// MakeId packs the request's fields, taking omitted ones from the
// settings. A field out of range is an *intf.FieldError naming it.
func (s *Service) MakeId(_ context.Context, r intf.MakeIdRequest) (int64, error) {
	id := intf.Id{Time: r.Time, Seq: r.Seq, Machine: s.settings.Machine, GenMethod: s.settings.GenMethod,
		Type: int64(s.settings.Type), Version: s.settings.Version}
	for _, f := range []struct {
		dst *int64
		src *int64
	}{{&id.Machine, r.Machine}, {&id.GenMethod, r.GenMethod}, {&id.Type, r.Type}, {&id.Version, r.Version}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if err := intf.CheckRange("type", id.Type, 0, 1); err != nil {
		return 0, err
	}
	l, _ := intf.IdType(id.Type).Layout()
	return encode(l, id)
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
	return time.UnixMilli(s.settings.EpochMillis + timeField*l.Unit.Milliseconds()).UTC(), nil
}

// Settings returns the settings in force, with defaults filled in and the
// machine id resolved.
func (s *Service) Settings() Settings { return s.settings }

// Stats are counters for monitoring.
type Stats struct {
	// ExhaustionWaits counts the times a time unit's sequence ran out and a
	// caller waited for the next unit.
	ExhaustionWaits uint64
	// ClockBackEvents counts the times the wall clock was seen to step
	// back by more than a second (the IDs were not affected).
	ClockBackEvents uint64
	// HighWaterMillis is the stored mark, in Unix milliseconds (0 without
	// a data dir).
	HighWaterMillis int64
}

// Stats returns the current counters.
func (s *Service) Stats() Stats {
	return Stats{ExhaustionWaits: s.units.waits.Load(), ClockBackEvents: s.clockBack.Load(), HighWaterMillis: s.markMs.Load()}
}

// Close stops issuing IDs, stores the exact last time unit issued as the
// mark (so a restart need not wait out the lead) and unlocks the data dir.
// Calls after the first return the first result.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.stop)
		<-s.done
		// With the background writer stopped, nothing raises the limit
		// again: from here on every GenId fails its limit check, so the
		// last unit read below is the last one ever issued.
		s.limit.Store(-1)
		if s.dir == nil {
			return
		}
		last := s.pop.lastUnit()
		if last >= 0 {
			ms := s.settings.EpochMillis + last*s.unitMilli
			if s.closeErr = s.dir.writeMark(ms); s.closeErr == nil {
				s.markMs.Store(ms)
			}
		}
		if err := s.closeDir(); s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

func (s *Service) closeDir() error {
	if s.dir == nil {
		return nil
	}
	err := s.dir.close()
	s.dir = nil
	return err
}
