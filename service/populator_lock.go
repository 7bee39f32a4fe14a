package service

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// lockedPopulator guards the state with a lock; the "lock" and "sync"
// populators are this one code over two locks. The lock is held only to
// step the state: a goroutine that finds the unit used up lets it go and
// waits for the next unit with the others (units.waitAfter), so a caller's
// deadline is never spent queueing behind a waiter.
type lockedPopulator struct {
	*units
	mu sync.Locker
	st state
}

// newLockPopulator uses a sync.Mutex, like Vesta's default ReentrantLock
// populator.
func newLockPopulator(u *units, start state) populator {
	return newLocked(u, new(sync.Mutex), start)
}

// newSpinPopulator uses a spinLock: the nearest Go counterpart of Vesta's
// synchronized populator, whose monitor spins before it parks.
func newSpinPopulator(u *units, start state) populator {
	return newLocked(u, new(spinLock), start)
}

func newLocked(u *units, mu sync.Locker, start state) populator {
	p := &lockedPopulator{units: u, mu: mu, st: start}
	u.setTry(p.tryReserve)
	return p
}

func (p *lockedPopulator) tryReserve(now, n int64) (reservation, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	next, first, got := p.step(p.st, now, n)
	if got == 0 {
		return reservation{}, p.st.last
	}
	p.st = next
	return reservation{next.last, first, got}, next.last
}

func (p *lockedPopulator) raise(floor int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st = p.raised(p.st, floor)
}

func (p *lockedPopulator) lastUnit() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.issued()
}

// spinLock is a lock on an atomic flag. Waiters spin briefly, then yield,
// then sleep.
type spinLock struct{ locked atomic.Bool }

func (l *spinLock) Lock() {
	for i := 0; !l.locked.CompareAndSwap(false, true); i++ {
		backoff(i)
	}
}

func (l *spinLock) Unlock() { l.locked.Store(false) }

// backoff is the i-th pause of a contended spin: a few busy retries, then
// yielding the processor, then short sleeps so a waiting goroutine does not
// burn a core while the holder waits for the next time unit.
func backoff(i int) {
	switch {
	case i < 8:
	case i < 64:
		runtime.Gosched()
	default:
		time.Sleep(20 * time.Microsecond)
	}
}
