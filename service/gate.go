package service

import (
	"context"
	"sync"
)

// unitGate is how callers wait for the next time unit: the first caller to
// wait for a unit starts one sleeper on the clock, which opens the gate (a
// closed channel) when the unit begins; every other caller waits on that
// channel, or for its own context. So a saturated service has one thread
// asleep on the clock per unit instead of one waiting per caller, all
// waiters wake together when the unit opens (none is left behind for
// several units), and a waiter's deadline or the service's Close ends its
// wait at once.
type unitGate struct {
	mu     sync.Mutex
	target int64         // clock nanos the current gate opens at
	open   chan struct{} // closed when the clock reached target
}

// channel returns the gate that opens at t (clock nanos), starting its
// sleeper if none waits for t yet; nil when a gate for a later time is
// pending (a caller that read a state already passed: it waits alone).
// stop ends the sleeper early (the service closing); the gate opens then.
func (g *unitGate) channel(t int64, clock Clock, stop context.Context) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.open != nil && g.target == t:
		return g.open
	case g.open != nil && g.target > t:
		select {
		case <-g.open: // opened already: a new gate for t
		default:
			return nil
		}
	}
	open := make(chan struct{})
	g.target, g.open = t, open
	go func() {
		_ = clock.WaitUntil(stop, t) // an error is stop: the waiters then see the service closed
		close(open)
	}()
	return open
}
