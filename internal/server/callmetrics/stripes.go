package callmetrics

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// stripes hands out one of n fixed stripes of words, preferring the one
// the calling goroutine's core used last: sync.Pool keeps a stripe per P.
// A stripe the pool drops (at a garbage collection) stays in all, so no
// count is lost; New then hands out the next one round the ring. Two cores
// may share a stripe now and then: the words are atomic, so that costs
// only speed.
type stripes struct {
	all  []*stripe
	pool sync.Pool
	next atomic.Uint32
}

// stripe is one stripe's words.
type stripe struct{ w []atomic.Uint64 }

// cacheLine is the padding after a stripe's words, so that two stripes
// share no cache line: 128 bytes also covers x86's adjacent-line prefetch.
const cacheLine = 128

// newStripes makes stripes of words words each, two per core.
func newStripes(words int) *stripes {
	s := &stripes{all: make([]*stripe, max(4, 2*runtime.GOMAXPROCS(0)))}
	for i := range s.all {
		s.all[i] = &stripe{w: make([]atomic.Uint64, words+cacheLine/8)[:words]}
	}
	s.pool.New = func() any { return s.all[int(s.next.Add(1))%len(s.all)] }
	return s
}

// get takes a stripe; put gives it back.
func (s *stripes) get() *stripe   { return s.pool.Get().(*stripe) }
func (s *stripes) put(st *stripe) { s.pool.Put(st) }

// sum is word i summed over the stripes.
func (s *stripes) sum(i int) uint64 {
	var n uint64
	for _, st := range s.all {
		n += st.w[i].Load()
	}
	return n
}
