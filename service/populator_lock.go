package service

import (
	"context"
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
	return &lockedPopulator{units: u, mu: new(sync.Mutex), st: start}
}

// newSpinPopulator uses a spinLock: the nearest Go counterpart of Vesta's
// synchronized populator, whose monitor spins before it parks.
func newSpinPopulator(u *units, start state) populator {
	return &lockedPopulator{units: u, mu: new(spinLock), st: start}
}

func (p *lockedPopulator) reserve(ctx context.Context, n int64) (unit, first, got int64, err error) {
	for {
		p.mu.Lock()
		next, first, got := p.step(p.st, p.now(), n)
		if got > 0 {
			p.st = next
			p.mu.Unlock()
			return next.last, first, got, nil
		}
		last := p.st.last
		p.mu.Unlock()
		if err := p.waitAfter(ctx, last); err != nil {
			return 0, 0, 0, err
		}
	}
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
