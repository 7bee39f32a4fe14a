package service

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// unitGate is how callers wait for the next time unit: the first caller to
// wait for a unit starts one sleeper on the clock; every other caller
// joins its queue. When the unit begins, the sleeper reserves IDs for the
// queued callers itself, in the order they came (a FIFO hand-off), hands
// each its reservation, then opens the gate (a closed channel) for the
// rest. So a saturated service has one thread asleep on the clock per unit
// instead of one waiting per caller, the callers that waited get their IDs
// without a race against fresh callers, and a waiter's deadline or the
// service's Close ends its wait at once. With a ticker (the system clock) the
// sleeper of a unit that had waiters stays for the next one, keeping the
// present unit for the populator's fast path (see sleep).
//
// A served caller still needs a processor to return: with many
// goroutines taking IDs flat out, the ones running would burn through the
// new unit for a whole scheduler slice each while the served ones wait in
// the run queue, up to a tenth of a second more. So while reservations
// wait to be picked up (served), a fresh caller first yields the
// processor to them (letServedOut): none waits more than about a unit,
// however many goroutines compete. Only for units longer than a scheduler
// slice (yields): a shorter unit is used up, and its fresh callers park
// at the next gate, sooner than a slice, and the yields would cost more
// than they give.
type unitGate struct {
	yields  bool // units are longer than schedulerSlice; set before use
	mu      sync.Mutex
	target  int64         // clock nanos the current gate opens at
	open    chan struct{} // closed when the clock reached target and the queue was served
	queue   []*gateWaiter // callers to serve when the gate opens, in order
	handing bool          // the sleeper is serving the queue: no more joins
	_       [64]byte
	served  atomic.Int64 // reservations handed to callers that have not picked them up
	_       [56]byte
}

// gateWaiter is one queued caller: it wants n IDs, and receives what the
// sleeper reserved for it (got 0: nothing left; it tries again).
type gateWaiter struct {
	n     int64
	r     chan reservation // buffered: the sleeper never blocks on a caller gone
	state atomic.Int32     // waiting, served or gone
}

// A gateWaiter's states: the sleeper moves waiting to served and sends;
// the caller that stops waiting without its reservation moves waiting to
// gone, and the sleeper then reserves nothing for it.
const (
	waiting int32 = iota
	served
	gone
)

// maxYields bounds how often one call yields to served callers.
const maxYields = 2

// schedulerSlice is how long Go lets a goroutine run before it preempts it
// for another.
const schedulerSlice = 10 * time.Millisecond

// letServedOut yields the processor, a few times at most, while callers
// served by the sleeper have not picked up their reservations.
func (g *unitGate) letServedOut() {
	if !g.yields {
		return
	}
	for i := 0; i < maxYields && g.served.Load() > 0; i++ {
		runtime.Gosched()
	}
}

// pickedUp counts a reservation received.
func (g *unitGate) pickedUp() { g.served.Add(-1) }

// leave ends w's wait without having received from w.r: it returns the
// reservation the sleeper handed w, if it did (zero otherwise).
func (g *unitGate) leave(w *gateWaiter) reservation {
	if w.state.CompareAndSwap(waiting, gone) {
		return reservation{}
	}
	r := <-w.r // served: sent already, or about to be
	g.pickedUp()
	return r
}

// reservation is what a populator's attempt took: got IDs (maybe 0)
// first..first+got-1 of unit.
type reservation struct{ unit, first, got int64 }

// gateEnv is what a gate's sleeper works with.
type gateEnv struct {
	clock Clock
	// stop ends the sleeper early (the service closing): the gate then
	// opens without serving anyone.
	stop context.Context
	// try reserves up to n IDs for a queued caller.
	try func(n int64) (reservation, int64)
	// tick, when set, publishes the present time unit each time the
	// sleeper wakes, and the sleeper stays for the next unit while units
	// keep having waiters (see units.current).
	tick ticker
}

// ticker is the present unit kept for a saturated populator's fast path.
type ticker interface {
	// tick publishes the clock's unit at now (clock nanos) and returns
	// when the next unit begins.
	tick(now int64) (next int64)
	// untick withdraws it: callers read the clock again.
	untick()
}

// join queues w (when not nil) for the gate that opens at t (clock
// nanos), starting its sleeper if no gate is pending, and returns the
// gate and whether w was queued. A caller of an earlier time than the
// pending gate's (it read a state already passed) gets a nil gate: it
// waits alone. A caller of a later time joins the pending gate: it is
// answered when that one opens (with what the populator has then, maybe
// nothing: it tries again), or carried on by a ticking sleeper until its
// unit comes; so no gate ever replaces one with callers queued on it. A w
// that comes while the queue is being served is not queued: the unit has
// begun, and the caller tries again when the gate opens. A queued w is
// always answered on w.r.
func (g *unitGate) join(t int64, w *gateWaiter, env *gateEnv) (open <-chan struct{}, queued bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open != nil {
		pending := true
		select {
		case <-g.open:
			pending = false
		default:
		}
		switch {
		case pending && t < g.target:
			return nil, false
		case pending:
			if !g.handing && w != nil {
				g.queue = append(g.queue, w)
				queued = true
			}
			return g.open, queued
		case t == g.target:
			return g.open, false // opened already: try again
		}
	}
	gate := make(chan struct{})
	g.target, g.open, g.queue, g.handing = t, gate, nil, false
	if w != nil {
		g.queue = append(g.queue, w)
	}
	go g.sleep(t, gate, env)
	return gate, w != nil
}

// sleep waits for t, serves the queue in order and opens the gate. With a
// ticker it publishes the unit it woke in, and when that unit had waiters
// (the populator is saturated) it stays: it opens a gate for the next
// unit and sleeps until then, so that the present unit is known without a
// clock read per ID for as long as the saturation lasts, one wake per unit.
func (g *unitGate) sleep(t int64, open chan struct{}, env *gateEnv) {
	for {
		err := env.clock.WaitUntil(env.stop, t) // an error is stop: the waiters then see the service closed
		next := int64(0)
		if env.tick != nil && err == nil {
			next = env.tick.tick(env.clock.NowNanos())
		}
		g.mu.Lock()
		queue := g.queue
		g.queue, g.handing = nil, true
		// g.open is still this sleeper's gate: join never replaces a
		// pending one.
		stay := env.tick != nil && err == nil && len(queue) > 0
		var nextOpen chan struct{}
		if stay {
			// The next unit's gate, pending from now on: callers that use
			// up this unit queue on it.
			nextOpen = make(chan struct{})
			g.target, g.open, g.queue, g.handing = next, nextOpen, nil, false
		}
		g.mu.Unlock()
		if rest := g.serve(queue, err, env.try, stay); len(rest) > 0 {
			// The unit ran out before their turn: they are first in line
			// for the next one (nextOpen, still pending), ahead of the
			// callers that came since.
			g.mu.Lock()
			g.queue = append(rest[:len(rest):len(rest)], g.queue...)
			g.mu.Unlock()
		}
		close(open)
		if !stay {
			if env.tick != nil {
				env.tick.untick()
			}
			return
		}
		t, open = next, nextOpen
	}
}

// serve hands each queued caller its reservation, in order. When carry is
// set and the unit runs out before a caller's turn, it returns that caller
// and the ones after it, unanswered; otherwise they are answered with
// nothing (they try again).
func (g *unitGate) serve(queue []*gateWaiter, err error, try func(n int64) (reservation, int64), carry bool) (rest []*gateWaiter) {
	for i, w := range queue {
		if w.state.Load() == gone {
			continue
		}
		var r reservation
		if err == nil {
			if r, _ = try(w.n); r.got == 0 && carry {
				return queue[i:]
			}
		}
		g.answer(queue[i:i+1], r)
	}
	return nil
}

// answer hands r to each caller of ws still waiting.
func (g *unitGate) answer(ws []*gateWaiter, r reservation) {
	for _, w := range ws {
		if w.state.CompareAndSwap(waiting, served) { // else it left: r's IDs are skipped
			g.served.Add(1)
			w.r <- r
		}
	}
}
