package service

import (
	"context"
	"sync"
)

// lockPopulator guards the state with a sync.Mutex, like Vesta's default
// ReentrantLock populator. A goroutine that finds the unit used up waits
// for the next unit while holding the lock: the others could not issue
// anything in the meantime anyway.
type lockPopulator struct {
	*units
	mu sync.Mutex
	st state
}

func newLockPopulator(u *units, start state) populator { return &lockPopulator{units: u, st: start} }

func (p *lockPopulator) reserve(ctx context.Context, n int64) (unit, first, got int64, err error) {
	p.mu.Lock()
	for {
		next, first, got := p.step(p.st, p.now(), n)
		if got > 0 {
			p.st = next
			p.mu.Unlock()
			return next.last, first, got, nil
		}
		if err := p.waitAfter(ctx, p.st.last); err != nil {
			p.mu.Unlock()
			return 0, 0, 0, err
		}
	}
}

func (p *lockPopulator) raise(floor int64) {
	p.mu.Lock()
	p.st = p.raised(p.st, floor)
	p.mu.Unlock()
}

func (p *lockPopulator) lastUnit() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.last
}
