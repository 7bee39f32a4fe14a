package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Timing of the high-water marks: every markInterval the marks are stored
// at now+markLead (plus MaxBorrow: see lead), so the hot path finds them
// ahead of the clock as long as writes keep succeeding.
const (
	markInterval = time.Second
	markLead     = 3 * time.Second
	// clockBackThreshold is how far the wall clock may lag before a
	// clock-back event is logged and counted.
	clockBackThreshold = time.Second
)

// openMark locks the data dir, makes sure the clock is past the stored
// mark, and stores a mark ahead of the clock. It returns the unit the
// populator must start above. A dir used before without a readable mark
// is refused unless Settings.ResetDataDir (see dataDir.readMark).
func (s *Service) openMark(ctx context.Context) (floor int64, err error) {
	if s.dir, err = openDataDir(s.settings.DataDir); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			s.closeDir()
		}
	}()
	m, err := s.dir.readMark(s.settings.ResetDataDir)
	if err != nil {
		return 0, err
	}
	if m.warn != "" {
		s.settings.Logger.Warn(m.warn)
	}
	var warn string
	if s.leaseState, warn, err = s.dir.readLeaseState(m.ok, s.settings.ResetDataDir); err != nil {
		return 0, err
	}
	if warn != "" {
		s.settings.Logger.Warn(warn)
	}
	floor = -1
	if m.ok {
		if err := s.checkMark(m.ms); err != nil {
			return 0, fmt.Errorf("%w: %s: %w", ErrCorruptMark, m.where, err)
		}
		floor = s.floorOf(m.ms)
		if err := s.waitPast(ctx, floor, m.ms, m.where); err != nil {
			return 0, err
		}
	}
	// What a run that issues nothing leaves behind (removeMark): never
	// below the mark found, nor the time reached now.
	s.dir.keepMs = max(m.ms, s.settings.Clock.NowNanos()/int64(time.Millisecond))
	return floor, s.persistFileMark(0)
}

// endMillis is the Unix millisecond at which the layout's time field runs
// out: no ID can carry a time at or after it.
func (s *Service) endMillis() int64 {
	return s.settings.EpochMillis + (s.layout.Time.Max()+1)*s.layout.Unit.Milliseconds()
}

// checkMark refuses a mark (Unix ms, read from the data dir or a lease)
// that no ID of this layout can have reached: negative, or past the end of
// the time field. Such a mark is corrupt; taking it would either overflow
// the time arithmetic or stop every ID for good, so refusing to start with
// a clear error is the only safe answer. A mark before the epoch is valid
// (a later epoch configured since) and bounds nothing.
func (s *Service) checkMark(ms int64) error {
	if end := s.endMillis(); ms < 0 || ms > end {
		return fmt.Errorf("mark %d is outside 0..%d (%s, where the %s time field of epoch %s ends): no ID can have been issued at it",
			ms, end, time.UnixMilli(end).UTC().Format(time.RFC3339), s.settings.Type, time.UnixMilli(s.settings.EpochMillis).UTC().Format(time.RFC3339))
	}
	return nil
}

// floorOf is the unit a checked mark bounds: its own unit, or -1 for a
// mark before the epoch (units issued are never below 0, and the
// populators start from -1 at the lowest).
func (s *Service) floorOf(ms int64) int64 { return max(s.unitOf(ms), -1) }

// lead is how far ahead of the clock the marks are stored: markLead, plus
// MaxBorrow so that borrowed units stay below them. A start or a takeover
// may hand out the unit after a mark at once when it begins within lead.
func (s *Service) lead() time.Duration { return markLead + s.settings.MaxBorrow }

// waitPast waits until the unit after floor, the unit of mark (Unix ms,
// stored in where), begins within the lead (see lead), or refuses when the
// clock is behind mark by more than MaxClockBackwardWait.
func (s *Service) waitPast(ctx context.Context, floor, mark int64, where string) error {
	return s.waitNear(ctx, floor, mark, where, s.lead()+time.Duration(s.units.unitNanos))
}

// waitNear is waitPast that may return up to ahead before the unit after
// floor begins (the data dir's mark, a lease's hold: a restart serves at
// once, its first IDs a little ahead of the clock). A mark within the lead
// plus a unit is never the clock being behind, even when ahead is shorter.
func (s *Service) waitNear(ctx context.Context, floor, mark int64, where string, ahead time.Duration) error {
	resume := s.units.epochNanos + (floor+1)*s.units.unitNanos
	now := s.settings.Clock.NowNanos()
	// The clock is judged against the mark itself, less the lead it may
	// have been stored ahead by: the rest of the mark's own unit (a whole
	// second of max-peak after a graceful Close) and the lead a crash
	// leaves are not the clock being behind.
	gap := time.Duration(resume - now)
	slack := max(ahead, s.lead()+time.Duration(s.units.unitNanos))
	if behind := time.Duration(mark*int64(time.Millisecond) - now); behind-slack > s.settings.MaxClockBackwardWait {
		return fmt.Errorf("%w: the clock is %s behind the last time IDs may have been issued at (%s, stored in %s), more than maxClockBackwardWait %s: fix the clock, or raise maxClockBackwardWait to wait it out",
			intf.ErrClockBehind, gap.Round(time.Millisecond), time.UnixMilli(mark).UTC(), where, s.settings.MaxClockBackwardWait)
	}
	// The unit after the mark may be handed out at once when it begins
	// within the lead (a crash leaves the mark that far ahead): the IDs
	// carry a time a little ahead until the clock catches up. Further
	// away, wait until it is within the lead.
	// Every mark stored from now on covers the unit after floor, which
	// may be handed out before the clock reaches it.
	s.coverMillis(s.settings.EpochMillis + (floor+1)*s.layout.Unit.Milliseconds())
	if gap <= ahead {
		return nil
	}
	s.settings.Logger.Info("vesta: waiting for the clock to pass the high-water mark", "wait", gap-ahead, "mark", where)
	return s.settings.Clock.WaitUntil(ctx, resume-int64(ahead))
}

// unitOf is the time unit containing Unix millisecond ms (floored).
func (s *Service) unitOf(ms int64) int64 {
	d := ms - s.settings.EpochMillis
	u := d / s.layout.Unit.Milliseconds()
	if d < 0 && d%s.layout.Unit.Milliseconds() != 0 {
		u--
	}
	return u
}

// aheadMillis is the mark to store now: the lead ahead of the clock, or of
// the wall clock when that is ahead and the clock is about to follow it,
// and never below a unit that may be handed out ahead of the clock (see
// coverMillis).
func (s *Service) aheadMillis(wallNanos int64) int64 {
	return max((max(s.settings.Clock.NowNanos(), wallNanos)+int64(s.lead()))/int64(time.Millisecond), s.marks.min.Load())
}

// coverMillis makes every mark stored from now on at least ms.
func (s *Service) coverMillis(ms int64) {
	for {
		cur := s.marks.min.Load()
		if cur >= ms || s.marks.min.CompareAndSwap(cur, ms) {
			return
		}
	}
}

// persistFileMark stores a mark ahead in the data dir, then lets the hot
// path issue up to it.
func (s *Service) persistFileMark(wallNanos int64) error {
	ms := s.aheadMillis(wallNanos)
	if err := s.dir.writeMark(ms); err != nil {
		return err
	}
	s.marks.file.Store(ms)
	s.update(func(b *bounds) { b.fileMark = s.unitOf(ms) })
	return nil
}

// resyncer is a clock that can follow the wall clock forward (the system clock).
type resyncer interface {
	Resync() (wallBehind time.Duration)
}

// background keeps the marks ahead of the clock (every markInterval, and
// right after a lease renewal) and lets the clock follow the wall clock
// forward. The marks are stored first, so a clock that
// jumps forward never finds them behind it.
func (s *Service) background(ctx context.Context) {
	defer close(s.life.done)
	t := time.NewTicker(markInterval)
	defer t.Stop()
	resync, _ := s.settings.Clock.(resyncer)
	var fileFailing, leaseFailing, wallBehind bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.marks.renewed: // store the lease mark up to the new validity now
		}
		var wall int64
		if resync != nil {
			wall = time.Now().UnixNano()
		}
		if s.dir != nil {
			err := s.persistFileMark(wall)
			if errors.Is(err, ErrDataDirLost) {
				s.update(func(b *bounds) { b.dirLost = true })
			}
			fileFailing = s.logTransition(fileFailing, err, "data dir")
		}
		// The lease mark is written only when the stored one falls within
		// the lease's keep of its validity, and then step ahead: a fleet's
		// coordinator sees about one write per step (machineid.MarkSpan).
		if need, ms := s.leaseMarkAhead(wall); s.settings.Lease != nil && s.cur.Load().held() && need > s.marks.lease.Load() {
			// Not cut short by Close, which waits for it (at most
			// markInterval): a store cancelled mid-flight may still reach
			// the coordinator after Close's exact mark and overwrite it.
			err := s.storeLeaseMark(context.WithoutCancel(ctx), ms)
			if ctx.Err() != nil {
				return // Close began meanwhile: it stores the exact mark now
			}
			leaseFailing = s.logTransition(leaseFailing, err, "lease")
		}
		s.marks.failing.Store(fileFailing || leaseFailing)
		if resync != nil {
			behind := resync.Resync()
			if behind > clockBackThreshold && !wallBehind {
				s.events.clockBack.Add(1)
				s.settings.Logger.Warn("vesta: the wall clock moved back; IDs keep the monotonic time", "behind", behind)
			}
			wallBehind = behind > clockBackThreshold
		}
	}
}

// logTransition logs when storing a mark starts or stops failing and
// returns whether it fails now.
func (s *Service) logTransition(failing bool, err error, where string) bool {
	if err != nil {
		s.marks.failures.Add(1)
	}
	if err != nil && !failing {
		s.settings.Logger.Error("vesta: cannot store the time high-water mark; IDs stop when it falls behind the clock", "where", where, "err", err)
	} else if err == nil && failing {
		s.settings.Logger.Info("vesta: time high-water mark stored again", "where", where)
	}
	return err != nil
}
