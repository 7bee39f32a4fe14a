package segbuf

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vesta-go/vesta/intf"
)

// Handles and the set's lookup path take from one buffer at once, across
// thousands of switches of tiny ranges with a fifth of the loads failing:
// no ID is served twice and each goroutine's IDs strictly increase. The
// handles start dry (no buffer yet) and find it at their first Next. Run
// under -race.
func TestSeqNoDuplicateUnderChurn(t *testing.T) {
	src := &source{floor: 1, failP: 0.2, rnd: rand.New(rand.NewPCG(3, 4))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	b := New("t", src.load, policy(&wg, &closed, 7))
	find := func(context.Context, string) (*Buffer, error) { return b, nil }
	const goroutines, perG = 16, 2000
	got := make([][]int64, goroutines)
	var fails atomic.Int64
	var run sync.WaitGroup
	for g := range goroutines {
		seq := NewSeq("t", nil, find) // one handle per goroutine, or shared
		if g%2 == 0 {
			seq = NewSeq("t", b, find)
		}
		run.Go(func() {
			for len(got[g]) < perG {
				var id int64
				var err error
				if g%4 == 3 {
					id, err = b.Next(context.Background()) // the lookup path beside
				} else {
					id, err = seq.Next()
				}
				if err != nil {
					checkFailure(t, err, &fails)
					continue
				}
				got[g] = append(got[g], id)
			}
		})
	}
	run.Wait()
	closed.Store(true)
	wg.Wait()
	total := checkUnique(t, got)
	if src.calls.Load() < 500 {
		t.Fatalf("only %d loads: the test did not switch ranges often", src.calls.Load())
	}
	t.Logf("%d IDs, %d loads, %d failed calls", total, src.calls.Load(), fails.Load())
}

// A handle taking a range past its threshold starts the spare's load once
// (not once per caller): loads stay one per range, and the spare is there
// before the range runs dry, so no call waits.
func TestSeqLoadsOncePerRange(t *testing.T) {
	src := &source{floor: 1000, rnd: rand.New(rand.NewPCG(5, 6))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	defer func() { closed.Store(true); wg.Wait() }()
	b := New("t", src.load, policy(&wg, &closed, 1000))
	seq := NewSeq("t", b, func(context.Context, string) (*Buffer, error) { return b, nil })
	for i := range int64(10_000) {
		id, err := seq.Next()
		if err != nil {
			t.Fatal(err)
		}
		if id != i {
			t.Fatalf("ID %d, want %d", id, i)
		}
		if i%1000 == 500 {
			wg.Wait() // the spare's load has ended: the switch never waits
		}
	}
	if loads := src.calls.Load(); loads < 10 || loads > 11 {
		t.Errorf("%d loads for 10 ranges of 1000", loads)
	}
	if w := b.Status().Waits; w != 1 {
		t.Errorf("%d callers waited; want only the first (no range yet)", w)
	}
}

// find's error is Next's: a closed owner (after Drop, even with IDs left
// in the range), an unknown name.
func TestSeqFindErrors(t *testing.T) {
	src := &source{floor: 1000, rnd: rand.New(rand.NewPCG(7, 8))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	b := New("t", src.load, policy(&wg, &closed, 1000))
	find := func(_ context.Context, name string) (*Buffer, error) {
		switch {
		case closed.Load():
			return nil, intf.ErrClosed
		case name != "t":
			return nil, intf.ErrUnknownTag
		}
		return b, nil
	}
	if _, err := NewSeq("u", nil, find).Next(); !errors.Is(err, intf.ErrUnknownTag) {
		t.Fatalf("unknown name: %v", err)
	}
	seq := NewSeq("t", nil, find)
	if id, err := seq.Next(); err != nil || id != 0 {
		t.Fatalf("first ID %d, %v", id, err)
	}
	closed.Store(true)
	wg.Wait()
	b.Drop()
	for range 3 {
		if id, err := seq.Next(); !errors.Is(err, intf.ErrClosed) {
			t.Fatalf("after Drop: %d, %v", id, err)
		}
	}
}
