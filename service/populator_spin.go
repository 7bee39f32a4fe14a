package service

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// spinPopulator guards the state with a spin lock on an atomic flag: the
// nearest Go counterpart of Vesta's synchronized populator, whose monitor
// spins before it parks. Waiters spin briefly, then yield, then sleep.
type spinPopulator struct {
	*units
	locked atomic.Bool
	st     state
}

func newSpinPopulator(u *units, start state) populator { return &spinPopulator{units: u, st: start} }

func (p *spinPopulator) lock() {
	for i := 0; !p.locked.CompareAndSwap(false, true); i++ {
		backoff(i)
	}
}

func (p *spinPopulator) unlock() { p.locked.Store(false) }

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

func (p *spinPopulator) reserve(ctx context.Context, n int64) (unit, first, got int64, err error) {
	p.lock()
	for {
		next, first, got := p.step(p.st, p.now(), n)
		if got > 0 {
			p.st = next
			p.unlock()
			return next.last, first, got, nil
		}
		if err := p.waitAfter(ctx, p.st.last); err != nil {
			p.unlock()
			return 0, 0, 0, err
		}
	}
}

func (p *spinPopulator) raise(floor int64) {
	p.lock()
	p.st = p.raised(p.st, floor)
	p.unlock()
}

func (p *spinPopulator) lastUnit() int64 {
	p.lock()
	defer p.unlock()
	return p.st.last
}
