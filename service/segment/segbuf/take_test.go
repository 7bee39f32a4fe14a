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

// Handle callers (Take) and lookup callers (Next, Fill) take from one
// buffer at once, across thousands of switches of tiny ranges with a
// fifth of the loads failing: no ID is served twice and each goroutine's
// IDs strictly increase. Run under -race.
func TestTakeNoDuplicateUnderChurn(t *testing.T) {
	churn(t, 3, 2000, func(b *Buffer, g int, _ *rand.Rand) ([]int64, error) {
		var id int64
		var err error
		switch g % 4 {
		case 3:
			id, err = b.Next(context.Background()) // the lookup path beside
		case 2:
			id, err = b.TakeContext(context.Background())
		default:
			id, err = Take(b, TakeSlow)
		}
		return []int64{id}, err
	})
}

// Take past a range's threshold starts the spare's load once (not once
// per caller): loads stay one per range, and the spare is there before
// the range runs dry, so no call waits but the very first.
func TestTakeLoadsOncePerRange(t *testing.T) {
	src := &source{floor: 1000, rnd: rand.New(rand.NewPCG(5, 6))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	defer func() { closed.Store(true); wg.Wait() }()
	b := New("t", src.load, policy(&wg, &closed, 1000))
	for i := range int64(10_000) {
		id, err := Take(b, TakeSlow)
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

// After the owner closes and drops the buffer, Take fails with the
// owner's error even with IDs left in the range, and a cancelled context
// stops TakeContext's wait.
func TestTakeAfterDrop(t *testing.T) {
	src := &source{floor: 1000, rnd: rand.New(rand.NewPCG(7, 8))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	b := New("t", src.load, policy(&wg, &closed, 1000))
	if id, err := Take(b, TakeSlow); err != nil || id != 0 {
		t.Fatalf("first ID %d, %v", id, err)
	}
	closed.Store(true)
	wg.Wait()
	b.Drop()
	for range 3 {
		if id, err := Take(b, TakeSlow); !errors.Is(err, intf.ErrClosed) {
			t.Fatalf("after Drop: %d, %v", id, err)
		}
	}
	stop := make(chan struct{}) // a load that never ends before the test does
	var wg2 sync.WaitGroup
	defer func() { close(stop); wg2.Wait() }()
	c := New("u", func(int64) (Range, int64, error) { <-stop; return Range{}, 0, errDown }, policy(&wg2, new(atomic.Bool), 1000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.TakeContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
