package service

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/sysclock"
)

// A populator hands out (time unit, sequence) pairs, each at most once.
// Its strategies differ only in how they guard the shared state; the
// arithmetic is step, shared by all of them.
type populator interface {
	// reserve takes 1..n consecutive sequence numbers first..first+got-1 in
	// time unit unit, waiting for the next unit when this one is used up
	// (units.reserve, over the strategy's try).
	reserve(ctx context.Context, n int64) (unit, first, got int64, err error)
	// lastUnit is the latest unit handed out (or the start floor).
	lastUnit() int64
	// raise makes sure every later unit handed out is above floor.
	raise(floor int64)
}

// state is the last unit handed out and the last sequence used in it. A
// seq of -1 means none of last is used yet: the state a start or a raise
// leaves, so that the next unit is handed out at once (see raised).
// behind marks a unit of a saturated run (see step): taken right after
// its predecessor was used up, on time or caught up behind the clock. It
// is filled before the populator moves on, while it stays within the
// catch-up window: a caller held up in the middle of it (descheduled, a
// collection) finds it again rather than the clock's unit.
type state struct {
	last, seq int64
	behind    bool
}

// issued is the last unit an ID was handed out in.
func (st state) issued() int64 {
	if st.seq < 0 {
		return st.last - 1
	}
	return st.last
}

// units converts clock time to time units and implements the populate rule.
type units struct {
	clock      Clock
	epochNanos int64
	unitNanos  int64
	maxSeq     int64
	// borrow is how many units the populator may run ahead of the clock
	// when a unit is used up (Settings.MaxBorrow); 0 waits for the clock.
	borrow int64
	// catchUp is how many units behind the clock a used-up unit's
	// successor may be taken rather than skipped (catchUpWindow).
	catchUp int64
	waits   atomic.Uint64 // times a caller found a unit's sequence used up (reserve)
	// closing, when set, is done once the service closes: it ends waits.
	closing context.Context
	gate    unitGate
	env     gateEnv // the gate's sleeper's; set by setTry
	// current is the clock's present unit while a saturated populator's
	// gate sleeper keeps it (a clock that really sleeps: the system clock), -1
	// otherwise. A caller takes it instead of reading the clock: the
	// clock read is most of an ID's cost when the populator is
	// saturated. It may lag the clock by the sleeper's lateness at a unit
	// boundary, never lead it (see tick).
	_       [64]byte
	current atomic.Int64
	_       [56]byte
	// try is the strategy's one attempt to reserve up to n IDs without
	// waiting, at clock unit now (read before: a caller's reading may be
	// older than the state, which step allows): got 0 when the unit is
	// used up, with the state's last unit. Set once by the populator's
	// constructor; tryNow is try at the clock's present unit, for the
	// gate's sleeper.
	try    func(now, n int64) (r reservation, last int64)
	tryNow func(n int64) (r reservation, last int64)
}

// setTry installs a strategy's try, and with it what the gate's sleeper
// needs.
func (u *units) setTry(try func(now, n int64) (reservation, int64)) {
	u.try = try
	u.tryNow = func(n int64) (reservation, int64) { return try(u.now(), n) }
	u.current.Store(-1)
	stop := u.closing
	if stop == nil {
		stop = context.Background()
	}
	u.env = gateEnv{clock: u.clock, stop: stop, try: u.tryNow}
	u.gate.yields = time.Duration(u.unitNanos) > schedulerSlice
	if _, sleeps := u.clock.(*sysclock.Clock); sleeps {
		// Only a clock whose waits take real time: a test clock that
		// jumps to the target would be driven ahead by the ticking.
		u.env.tick = u
	}
}

// tick implements ticker.
func (u *units) tick(now int64) int64 {
	unit := (now - u.epochNanos) / u.unitNanos
	u.current.Store(unit)
	return u.epochNanos + (unit+1)*u.unitNanos
}

// untick implements ticker.
func (u *units) untick() { u.current.Store(-1) }

// present is the unit to reserve in: the kept one when a sleeper keeps it
// (cached), else the clock's.
func (u *units) present() (unit int64, cached bool) {
	if c := u.current.Load(); c >= 0 {
		return c, true
	}
	return u.now(), false
}

// reserve is every populator's reserve: try, and when the unit is used
// up wait for the next one (waitAfter), which may hand over IDs reserved
// for this caller at once.
func (u *units) reserve(ctx context.Context, n int64) (unit, first, got int64, err error) {
	u.gate.letServedOut()
	// The clock is read before the strategy's lock or CAS, not under it:
	// the lock is held for less time, and a CAS retry reads it no more.
	now, cached := u.present()
	counted, waited := int64(0), false // the used-up unit this call counted a wait for
	for {
		r, last := u.try(now, n)
		if r.got == 0 && cached {
			// The kept unit is used up: the clock may be past it already
			// (the sleeper not yet awake): look before waiting.
			now, cached = u.now(), false
			continue
		}
		if r.got == 0 {
			// Once per used-up unit and call: a caller that came while the
			// gate's queue was served waits for the gate, then again for
			// its unit, and that is one wait (ExhaustionWaits).
			if !waited || last != counted {
				u.waits.Add(1)
				counted, waited = last, true
			}
			if r, err = u.waitAfter(ctx, last, n); err != nil {
				return 0, 0, 0, err
			}
		}
		if r.got > 0 {
			return r.unit, r.first, r.got, nil
		}
		now, cached = u.present()
	}
}

func (u *units) now() int64 { return (u.clock.NowNanos() - u.epochNanos) / u.unitNanos }

// catchUpWindow is how far behind the clock a saturated populator may
// issue: when a unit was used up and the next call comes more than one
// unit later (the waiter woke late: the thread was descheduled, a
// collection paused it), the units in between are issued in turn, each
// filled, instead of skipped, as long as they lie within this window
// behind the clock; and a unit of such a run that a caller left half used
// (held up in the middle of it) is filled first the same way. A saturated min-granularity service so keeps its full
// rate (1,024,000 IDs/s) through wake-ups up to 5 ms late, with IDs whose
// time is at most 5 ms behind their issue. It is less than one
// max-peak unit, which never catches up. Uniqueness is untouched: every
// unit handed out is above the last one.
const catchUpWindow = 5 * time.Millisecond

// step is the populate rule. A unit after last starts at sequence 0. In the
// same unit, or a unit before last (a goroutine that read the clock before
// another one advanced last: the clock itself never runs back), the sequence
// continues from last. When last's sequence is used up, the next unit is
// borrowed if it is at most borrow units ahead of the clock; else got == 0:
// wait (waitAfter). When last was used up and the clock has reached
// last+1, last+1 is taken (behind: caught up when the clock has passed it)
// if within catchUp units of the clock, and such a unit is filled while
// it stays within them. A unit after one not used up is the clock's: the
// load did not saturate the populator, and its IDs carry the present time.
func (u *units) step(st state, now, n int64) (next state, first, got int64) {
	if now > st.last {
		switch {
		case st.behind && st.seq < u.maxSeq && st.last >= now-u.catchUp:
			return u.continued(st, n)
		case st.seq >= u.maxSeq && st.last+1 >= now-u.catchUp:
			got = min(n, u.maxSeq+1)
			return state{last: st.last + 1, seq: got - 1, behind: true}, 0, got
		}
		got = min(n, u.maxSeq+1)
		return state{last: now, seq: got - 1}, 0, got
	}
	if st.seq >= u.maxSeq {
		if st.last+1 <= now+u.borrow {
			got = min(n, u.maxSeq+1)
			return state{last: st.last + 1, seq: got - 1}, 0, got
		}
		return st, 0, 0
	}
	return u.continued(st, n)
}

// continued takes up to n more sequence numbers of st.last, which has some.
func (u *units) continued(st state, n int64) (next state, first, got int64) {
	got = min(n, u.maxSeq-st.seq)
	return state{last: st.last, seq: st.seq + got, behind: st.behind}, st.seq + 1, got
}

// raised is st moved above floor: when st is not past floor, the next unit
// handed out is floor+1, at once, even if the clock has not reached it yet
// (its IDs then carry a time at most the marks' lead ahead: the marks are
// stored that far ahead, and the limit check refuses anything above them).
// A restart after a crash or a takeover so serves without waiting.
func (u *units) raised(st state, floor int64) state {
	if st.last > floor { // the next unit handed out is st.last or later
		return st
	}
	return state{last: floor + 1, seq: -1}
}

// waitAfter blocks until the clock is in a unit after last, ctx is done
// or the service closes (then intf.ErrClosed). Waiters share one sleeper
// per unit (unitGate), which serves them in order when the unit begins:
// r holds the IDs reserved for this caller (got 0: none, try again). None
// holds a populator's lock while it waits.
func (u *units) waitAfter(ctx context.Context, last, n int64) (r reservation, err error) {
	t := u.epochNanos + (last+1-u.borrow)*u.unitNanos // last+1 may be borrowed from then on
	if u.clock.NowNanos() >= t {
		return reservation{}, nil
	}
	stop := u.env.stop
	if stop.Err() != nil {
		return reservation{}, intf.ErrClosed
	}
	if err := ctx.Err(); err != nil { // no sleeper for a caller that cannot wait
		return reservation{}, err
	}
	w := &gateWaiter{n: n, r: make(chan reservation, 1)}
	open, queued := u.gate.join(t, w, &u.env)
	if open == nil {
		return reservation{}, u.clock.WaitUntil(ctx, t)
	}
	if !queued {
		// Came while the queue was served: the unit has begun; try again
		// once the gate is open.
		select {
		case <-open:
			return reservation{}, nil
		case <-ctx.Done():
			return reservation{}, ctx.Err()
		case <-stop.Done():
			return reservation{}, intf.ErrClosed
		}
	}
	select {
	case r = <-w.r:
		u.gate.pickedUp()
	case <-ctx.Done():
		u.gate.leave(w) // IDs reserved for it meanwhile are skipped
		return reservation{}, ctx.Err()
	case <-stop.Done():
		u.gate.leave(w)
		return reservation{}, intf.ErrClosed
	}
	if stop.Err() != nil {
		return reservation{}, intf.ErrClosed
	}
	return r, nil
}

// Populator names accepted in Settings.Populator.
const (
	PopulatorLock   = "lock"   // sync.Mutex (the default)
	PopulatorSync   = "sync"   // spin lock on an atomic flag with back-off
	PopulatorAtomic = "atomic" // CAS on an atomic.Pointer to an immutable state
	PopulatorPacked = "packed" // CAS on one atomic.Uint64 holding the state
)

var populators = map[string]func(u *units, start state) populator{
	PopulatorLock:   newLockPopulator,
	PopulatorSync:   newSpinPopulator,
	PopulatorAtomic: newAtomicPopulator,
	PopulatorPacked: newPackedPopulator,
}

// Populators lists the valid populator names, sorted.
func Populators() []string {
	names := make([]string, 0, len(populators))
	for n := range populators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newPopulator(name string, u *units, start state) (populator, error) {
	f, ok := populators[name]
	if !ok {
		return nil, fmt.Errorf("%w: populator %q: want one of %v", intf.ErrInvalidArgument, name, Populators())
	}
	return f(u, start), nil
}
