package service

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldClock is a clock whose WaitUntil blocks until the test releases it.
type heldClock struct {
	now     atomic.Int64
	waiting chan struct{} // one value per WaitUntil that began
	release chan struct{}
}

func (c *heldClock) NowNanos() int64 { return c.now.Load() }

func (c *heldClock) WaitUntil(ctx context.Context, t int64) error {
	c.waiting <- struct{}{}
	select {
	case <-c.release:
		c.now.Store(max(c.now.Load(), t))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The sleeper serves the queued callers in the order they joined, each
// its own reservation, before the gate opens; a caller that joins while
// the queue is being served is not queued (it tries again when the gate
// opens); a caller of an earlier time while a later gate is pending waits
// alone.
func TestGateHandsTheUnitToItsWaitersInOrder(t *testing.T) {
	clk := &heldClock{waiting: make(chan struct{}, 4), release: make(chan struct{})}
	var g unitGate
	var mu sync.Mutex
	var order []int64
	var late *gateWaiter
	var lateOpen <-chan struct{}
	try := func(n int64) (reservation, int64) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, n)
		if len(order) == 1 { // while serving: a caller that comes now
			late = &gateWaiter{n: 99, r: make(chan reservation, 1)}
			var queued bool
			lateOpen, queued = g.join(100, late, &gateEnv{clock: clk, stop: context.Background()})
			assert.False(t, queued, "not queued while the queue is served")
		}
		return reservation{unit: 7, first: int64(len(order)), got: n}, 7
	}
	waiters := []*gateWaiter{{n: 3, r: make(chan reservation, 1)}, {n: 1, r: make(chan reservation, 1)}, {n: 2, r: make(chan reservation, 1)}}
	env := &gateEnv{clock: clk, stop: context.Background(), try: try}
	var open <-chan struct{}
	for i, w := range waiters {
		o, queued := g.join(100, w, env)
		assert.True(t, queued)
		if i == 0 {
			open = o
			<-clk.waiting // one sleeper, started by the first
		}
		assert.Equal(t, open, o, "one gate per time")
	}
	assert.Nil(t, first(g.join(50, nil, env)), "an earlier time while a later gate is pending: wait alone")
	close(clk.release)
	<-open
	assert.Equal(t, []int64{3, 1, 2}, order, "served in the order they joined")
	assert.EqualValues(t, 3, g.served.Load(), "three reservations wait to be picked up")
	for i, w := range waiters {
		select {
		case r := <-w.r:
			g.pickedUp()
			assert.Equal(t, reservation{unit: 7, first: int64(i + 1), got: w.n}, r, "waiter %d got its own reservation", i)
		default:
			require.Failf(t, "not served", "waiter %d had nothing when the gate opened", i)
		}
	}
	assert.Equal(t, open, lateOpen, "a caller that came while serving gets the gate")
	assert.Empty(t, late.r, "and is not served from the queue")
	assert.Equal(t, reservation{}, g.leave(late), "it leaves with nothing")
	assert.Zero(t, g.served.Load(), "every reservation picked up")
	assert.Len(t, clk.waiting, 0, "one sleeper for the unit")
}

// A gate whose sleeper is stopped (the service closing) opens without
// serving anyone: the waiters see the service closed.
func TestGateStoppedServesNobody(t *testing.T) {
	clk := &heldClock{waiting: make(chan struct{}, 1), release: make(chan struct{})}
	var g unitGate
	stop, cancel := context.WithCancel(context.Background())
	called := false
	w := &gateWaiter{n: 1, r: make(chan reservation, 1)}
	open, _ := g.join(100, w, &gateEnv{clock: clk, stop: stop, try: func(int64) (reservation, int64) { called = true; return reservation{got: 1}, 0 }})
	<-clk.waiting
	cancel()
	<-open
	assert.False(t, called, "nothing reserved after stop")
	assert.Equal(t, reservation{}, <-w.r, "the waiter gets nothing")
}

// A caller that stops waiting before the unit begins has nothing reserved
// for it; one that stops after its reservation was made picks it up as it
// leaves, so that fresh callers do not keep yielding to it.
func TestGateWaiterThatLeaves(t *testing.T) {
	clk := &heldClock{waiting: make(chan struct{}, 1), release: make(chan struct{})}
	var g unitGate
	var tries atomic.Int64
	try := func(n int64) (reservation, int64) { tries.Add(1); return reservation{unit: 1, got: n}, 1 }
	left := &gateWaiter{n: 1, r: make(chan reservation, 1)}
	stays := &gateWaiter{n: 2, r: make(chan reservation, 1)}
	env := &gateEnv{clock: clk, stop: context.Background(), try: try}
	open, _ := g.join(100, left, env)
	g.join(100, stays, env)
	<-clk.waiting
	assert.Equal(t, reservation{}, g.leave(left), "gone before the unit began: nothing")
	close(clk.release)
	<-open
	assert.EqualValues(t, 1, tries.Load(), "nothing reserved for the caller gone")
	assert.EqualValues(t, 1, g.served.Load())
	assert.Equal(t, reservation{unit: 1, got: 2}, g.leave(stays), "served, then left: it takes its reservation")
	assert.Zero(t, g.served.Load())
	g.yields = true
	g.letServedOut() // returns at once
}

// testTicker records what the sleeper publishes; each unit lasts 100.
type testTicker struct {
	mu      sync.Mutex
	ticks   []int64
	unticks chan struct{}
}

func (k *testTicker) tick(now int64) int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ticks = append(k.ticks, now)
	return now + 100
}

func (k *testTicker) untick() { k.unticks <- struct{}{} }

func (k *testTicker) seen() []int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]int64(nil), k.ticks...)
}

// With a ticker, the sleeper publishes each unit it wakes in and stays for
// the next one while units keep having waiters (a gate for the next unit
// is pending meanwhile); at a unit nobody waited for, it withdraws the
// unit and ends.
func TestTickingSleeperStaysWhileUnitsHaveWaiters(t *testing.T) {
	clk := &heldClock{waiting: make(chan struct{}, 4), release: make(chan struct{})}
	tk := &testTicker{unticks: make(chan struct{}, 1)}
	var g unitGate
	env := &gateEnv{clock: clk, stop: context.Background(), tick: tk,
		try: func(n int64) (reservation, int64) { return reservation{unit: 1, got: n}, 1 }}

	w1 := &gateWaiter{n: 1, r: make(chan reservation, 1)}
	open1, _ := g.join(100, w1, env)
	<-clk.waiting
	clk.release <- struct{}{}
	<-open1
	assert.Equal(t, reservation{unit: 1, got: 1}, g.leave(w1))
	<-clk.waiting // it stays: sleeping until the next unit
	assert.Equal(t, []int64{100}, tk.seen())

	w2 := &gateWaiter{n: 2, r: make(chan reservation, 1)}
	open2, queued := g.join(200, w2, env)
	assert.True(t, queued)
	require.NotNil(t, open2)
	assert.NotEqual(t, open1, open2, "the next unit's own gate")
	select {
	case <-open2:
		t.Fatal("the next unit's gate opened before its time")
	default:
	}
	assert.Nil(t, first(g.join(150, nil, env)), "an earlier time while the next gate is pending: wait alone")
	clk.release <- struct{}{}
	<-open2
	assert.Equal(t, reservation{unit: 1, got: 2}, g.leave(w2))
	<-clk.waiting // unit 200 had a waiter: it stays again
	clk.release <- struct{}{}
	<-tk.unticks // unit 300 had none: withdrawn, and the sleeper ends
	assert.Equal(t, []int64{100, 200, 300}, tk.seen())
	assert.Len(t, clk.waiting, 0, "no further wait")
	assert.Zero(t, g.served.Load())
}

// first is a join's gate.
func first(open <-chan struct{}, _ bool) <-chan struct{} { return open }

// With a ticker, callers the unit ran out for before their turn are
// carried to the next unit's queue, first in line, ahead of the callers
// that joined it since; they are answered only then.
func TestTickingSleeperCarriesTheUnservedToTheNextUnit(t *testing.T) {
	clk := &heldClock{waiting: make(chan struct{}, 4), release: make(chan struct{})}
	tk := &testTicker{unticks: make(chan struct{}, 1)}
	var g unitGate
	var mu sync.Mutex
	var order []int64
	left := int64(5) // IDs left in the unit being served
	env := &gateEnv{clock: clk, stop: context.Background(), tick: tk,
		try: func(n int64) (reservation, int64) {
			mu.Lock()
			defer mu.Unlock()
			got := min(n, left)
			left -= got
			if got > 0 {
				order = append(order, n)
			}
			return reservation{unit: 1, got: got}, 1
		}}
	ws := []*gateWaiter{{n: 5, r: make(chan reservation, 1)}, {n: 2, r: make(chan reservation, 1)}, {n: 3, r: make(chan reservation, 1)}}
	open1, _ := g.join(100, ws[0], env)
	g.join(100, ws[1], env)
	g.join(100, ws[2], env)
	<-clk.waiting
	clk.release <- struct{}{}
	<-open1
	<-clk.waiting // the next unit's sleep
	assert.Equal(t, reservation{unit: 1, got: 5}, g.leave(ws[0]))
	assert.Empty(t, ws[1].r, "not answered: carried")
	assert.Empty(t, ws[2].r, "not answered: carried")

	late := &gateWaiter{n: 1, r: make(chan reservation, 1)}
	open2, queued := g.join(200, late, env)
	require.True(t, queued)
	mu.Lock()
	left = 100
	mu.Unlock()
	clk.release <- struct{}{}
	<-open2
	assert.Equal(t, reservation{unit: 1, got: 2}, g.leave(ws[1]))
	assert.Equal(t, reservation{unit: 1, got: 3}, g.leave(ws[2]))
	assert.Equal(t, reservation{unit: 1, got: 1}, g.leave(late))
	assert.Equal(t, []int64{5, 2, 3, 1}, order, "the carried first, in their order, then the later caller")
	<-clk.waiting
	clk.release <- struct{}{}
	<-tk.unticks
	assert.Zero(t, g.served.Load())
}
