package service

import (
	"fmt"
	"math"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// issuance is what GenId needs besides the populator, published as one
// immutable value behind an atomic pointer: a GenId that loads it before
// reserving a unit sees a consistent machine id, limit and error.
type issuance struct {
	fixed   uint64 // machine, genMethod, type and version bits
	machine int64
	// limit is the largest time unit that may be issued; above it, GenId
	// returns err (or ErrTimeOverflow past the layout's last unit).
	limit int64
	err   error
	// fence is the last unit the lease is surely valid for (see bounds).
	fence int64
	// tenure counts the holds of a machine id (see bounds.tenure).
	tenure uint64
}

// held tells whether a machine id is held (always true without a lease).
func (is *issuance) held() bool { return is.fence >= 0 }

// bounds are the inputs of the limit, guarded by Service.mu.
type bounds struct {
	machine int64
	// fileMark is the unit of the mark stored in the data dir
	// (math.MaxInt64 without a data dir).
	fileMark int64
	// leaseMark is the unit of the mark stored with the lease, and fence
	// the last unit the lease is surely valid for (both math.MaxInt64
	// without a lease). fence is -1 exactly while no machine id is held —
	// before the first Hold, during one, after Lost — so it also says
	// whether one is (see held).
	leaseMark, fence int64
	closed           bool
	// dirLost: the data dir was removed or replaced while held; issuing
	// stops for good (a restart takes the directory found then).
	dirLost bool
	// tenure counts the holds of a machine id: each raises the populator
	// above the previous holder's mark, so a unit reserved under an
	// earlier tenure is only valid under that one.
	tenure uint64
}

// held tells whether a machine id is held (always true without a lease).
// A held id's fence is never negative: Hold sets it from a validity on the
// service clock, which is past the epoch.
func (b *bounds) held() bool { return b.fence >= 0 }

func noBounds(machine int64) bounds {
	return bounds{machine: machine, fileMark: math.MaxInt64, leaseMark: math.MaxInt64, fence: math.MaxInt64}
}

// publishLocked derives a new issuance from s.b. Call with s.mu held.
func (s *Service) publishLocked() {
	b := s.b
	is := &issuance{
		machine: b.machine,
		// The fields are checked by New and the machine by its source.
		fixed: s.layout.Machine.Put(b.machine) | s.layout.GenMethod.Put(s.settings.GenMethod) |
			s.layout.TypeBit.Put(int64(s.settings.Type)) | s.layout.Version.Put(s.settings.Version),
		limit:  s.layout.Time.Max(),
		fence:  b.fence,
		tenure: b.tenure,
		err:    fmt.Errorf("%w: the %s time field ends at unit %d", intf.ErrTimeOverflow, s.settings.Type, s.layout.Time.Max()),
	}
	switch {
	case b.closed:
		is.limit, is.err = -1, intf.ErrClosed
	case b.dirLost:
		is.limit, is.err = -1, fmt.Errorf("%w: %w: %s: restart the process to lock the data dir found now",
			intf.ErrNotPersisted, ErrDataDirLost, s.settings.DataDir)
	case b.fence < 0:
		is.limit, is.err = -1, fmt.Errorf("%w: no machine id is held", intf.ErrFenced)
	default:
		lower := func(limit int64, err error) {
			if limit < is.limit {
				is.limit, is.err = limit, err
			}
		}
		lower(b.fence, fmt.Errorf("%w: the machine id lease was not renewed in time", intf.ErrFenced))
		lower(b.leaseMark, fmt.Errorf("%w: the high-water mark of machine %d is not stored with its lease", intf.ErrNotPersisted, b.machine))
		lower(b.fileMark, fmt.Errorf("%w: the mark in %s (%s) is behind the clock: is the data dir writable?",
			intf.ErrNotPersisted, s.settings.DataDir, time.UnixMilli(s.marks.file.Load()).UTC()))
	}
	s.cur.Store(is)
}

// update changes the bounds and publishes the result.
func (s *Service) update(f func(b *bounds)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.b)
	s.publishLocked()
}

// errAt is the error for a unit above is.limit.
func (is *issuance) errAt(unit int64, s *Service) error {
	if unit > s.layout.Time.Max() {
		return fmt.Errorf("%w: time unit %d exceeds the %s field's maximum %d", intf.ErrTimeOverflow, unit, s.settings.Type, s.layout.Time.Max())
	}
	return is.err
}
