package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/vesta-go/vesta/intf"
)

// A populator hands out (time unit, sequence) pairs, each at most once.
// Its strategies differ only in how they guard the shared state; the
// arithmetic is step, shared by all of them.
type populator interface {
	// reserve takes 1..n consecutive sequence numbers first..first+got-1 in
	// time unit unit, waiting for the next unit when this one is used up.
	reserve(ctx context.Context, n int64) (unit, first, got int64, err error)
	// lastUnit is the latest unit handed out (or the start floor).
	lastUnit() int64
	// raise makes sure every later unit handed out is above floor.
	raise(floor int64)
}

// state is the last unit handed out and the last sequence used in it.
type state struct{ last, seq int64 }

// units converts clock time to time units and implements the populate rule.
type units struct {
	clock      Clock
	epochNanos int64
	unitNanos  int64
	maxSeq     int64
	waits      atomic.Uint64 // times a unit's sequence ran out
	// closing, when set, is done once the service closes: it ends waits.
	closing context.Context
}

func (u *units) now() int64 { return (u.clock.NowNanos() - u.epochNanos) / u.unitNanos }

// step is the populate rule. A unit after last starts at sequence 0. In the
// same unit, or a unit before last (a goroutine that read the clock before
// another one advanced last: the clock itself never runs back), the sequence
// continues from last. got == 0 means last's sequence is used up: wait.
func (u *units) step(st state, now, n int64) (next state, first, got int64) {
	if now > st.last {
		got = min(n, u.maxSeq+1)
		return state{last: now, seq: got - 1}, 0, got
	}
	if st.seq >= u.maxSeq {
		return st, 0, 0
	}
	got = min(n, u.maxSeq-st.seq)
	return state{last: st.last, seq: st.seq + got}, st.seq + 1, got
}

// raised is st moved up to floor with its sequence used up, so the next
// unit handed out is above floor.
func (u *units) raised(st state, floor int64) state {
	if st.last >= floor {
		return st
	}
	return state{last: floor, seq: u.maxSeq}
}

// waitAfter blocks until the clock is in a unit after last, ctx is done
// or the service closes. A waiter may hold the populator's lock, and Close
// needs that lock to read the last unit: closing must end every wait.
func (u *units) waitAfter(ctx context.Context, last int64) error {
	u.waits.Add(1)
	t := u.epochNanos + (last+1)*u.unitNanos
	if u.closing == nil {
		return u.clock.WaitUntil(ctx, t)
	}
	if u.closing.Err() != nil {
		return intf.ErrClosed
	}
	wctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(u.closing, func() { cancel(intf.ErrClosed) })
	err := u.clock.WaitUntil(wctx, t)
	stop()
	cause := context.Cause(wctx)
	cancel(nil)
	if err != nil && errors.Is(cause, intf.ErrClosed) {
		return intf.ErrClosed
	}
	return err
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
