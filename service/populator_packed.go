package service

import "sync/atomic"

// packedPopulator keeps the state in one atomic.Uint64 — behind in the
// top bit, last unit + 1 in the next 42 bits (the widest time field has
// 40), the sequence + 1 in the low 21 (a sequence of -1, none used, is 0)
// — and advances it with CAS: lock-free like atomicPopulator, without its
// allocation.
type packedPopulator struct {
	*units
	st atomic.Uint64
}

const packedSeqBits = 21 // holds the widest sequence (20 bits), plus one

const packedBehind = 1 << 63

func pack(st state) uint64 {
	v := uint64(st.last+1)<<packedSeqBits | uint64(st.seq+1)
	if st.behind {
		v |= packedBehind
	}
	return v
}

func unpack(v uint64) state {
	return state{last: int64(v&^packedBehind>>packedSeqBits) - 1, seq: int64(v&(1<<packedSeqBits-1)) - 1,
		behind: v&packedBehind != 0}
}

func newPackedPopulator(u *units, start state) populator {
	p := &packedPopulator{units: u}
	p.st.Store(pack(start))
	u.setTry(p.tryReserve)
	return p
}

func (p *packedPopulator) tryReserve(now, n int64) (reservation, int64) {
	for {
		cur := p.st.Load()
		st := unpack(cur)
		next, first, got := p.step(st, now, n)
		if got == 0 {
			return reservation{}, st.last
		}
		if p.st.CompareAndSwap(cur, pack(next)) {
			return reservation{next.last, first, got}, next.last
		}
	}
}

func (p *packedPopulator) raise(floor int64) {
	for {
		cur := p.st.Load()
		next := pack(p.raised(unpack(cur), floor))
		if next == cur || p.st.CompareAndSwap(cur, next) {
			return
		}
	}
}

func (p *packedPopulator) lastUnit() int64 { return unpack(p.st.Load()).issued() }
