package service

import "sync/atomic"

// atomicPopulator swaps an immutable state through a CAS loop on an
// atomic.Pointer, like Vesta's AtomicReference populator. Each ID costs one
// small allocation (the new state); nobody ever holds a lock.
type atomicPopulator struct {
	*units
	st atomic.Pointer[state]
}

func newAtomicPopulator(u *units, start state) populator {
	p := &atomicPopulator{units: u}
	p.st.Store(&start)
	u.setTry(p.tryReserve)
	return p
}

func (p *atomicPopulator) tryReserve(now, n int64) (reservation, int64) {
	for {
		cur := p.st.Load()
		next, first, got := p.step(*cur, now, n)
		if got == 0 {
			return reservation{}, cur.last
		}
		if p.st.CompareAndSwap(cur, &next) {
			return reservation{next.last, first, got}, next.last
		}
	}
}

func (p *atomicPopulator) raise(floor int64) {
	for {
		cur := p.st.Load()
		next := p.raised(*cur, floor)
		if next == *cur || p.st.CompareAndSwap(cur, &next) {
			return
		}
	}
}

func (p *atomicPopulator) lastUnit() int64 { return p.st.Load().issued() }
