package segbuf

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vesta-go/vesta/intf"
)

var errDown = errors.New("source down")

// source is an in-memory allocator of ranges that fails on demand.
type source struct {
	mu     sync.Mutex
	max    int64
	floor  int64
	calls  atomic.Int64
	failP  float64 // chance that a load fails
	rnd    *rand.Rand
	closed atomic.Bool
}

func (s *source) load(step int64) (Range, int64, error) {
	s.calls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rnd.Float64() < s.failP {
		return Range{}, 0, errDown
	}
	if step <= 0 {
		step = s.floor
	}
	s.max += step
	return Range{Start: s.max - step, End: s.max}, s.floor, nil
}

// policy runs loads in goroutines the test waits for.
func policy(wg *sync.WaitGroup, closed *atomic.Bool, maxStep int64) *Policy {
	return &Policy{MaxStep: maxStep, WaitTimeout: time.Minute, RetryInterval: 0, Now: time.Now,
		Go: func(f func()) bool {
			if closed.Load() {
				return false
			}
			wg.Go(f)
			return true
		},
		Closed: closed.Load,
		Exhausted: func(name string, cause error, _ time.Duration) error {
			return errors.Join(intf.ErrUnavailable, cause)
		}}
}

// Many goroutines take single IDs and batches across thousands of range
// switches of tiny ranges, while a fifth of the loads fail and some
// callers give up (cancelled or expiring contexts): no ID is served twice,
// each goroutine's IDs strictly increase, and every failure is one of the
// expected kinds. Run under -race.
func TestNoDuplicateUnderChurn(t *testing.T) {
	churn(t, 1, 1500, func(b *Buffer, _ int, rnd *rand.Rand) ([]int64, error) {
		ctx, cancel := callerContext(rnd)
		defer cancel()
		if rnd.IntN(4) == 0 {
			ids := make([]int64, 1+rnd.IntN(20))
			return ids, b.Fill(ctx, ids)
		}
		id, err := b.Next(ctx)
		return []int64{id}, err
	})
}

// callerContext is a caller's context: one in ten already cancelled, one
// in ten expiring within 50 µs, the rest without an end.
func callerContext(rnd *rand.Rand) (context.Context, context.CancelFunc) {
	switch rnd.IntN(10) {
	case 0:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	case 1:
		return context.WithTimeout(context.Background(), time.Duration(rnd.IntN(50))*time.Microsecond)
	}
	return context.Background(), func() {}
}

// churn runs 16 goroutines taking perG IDs each from one buffer of tiny
// ranges whose loads fail a fifth of the time, each step by take (g is the
// goroutine, rnd its own), and checks that no ID is served twice, that each
// goroutine's IDs strictly increase, that every failure is one of the
// expected kinds, and that the ranges switched often.
func churn(t *testing.T, seed uint64, perG int, take func(b *Buffer, g int, rnd *rand.Rand) ([]int64, error)) {
	t.Helper()
	src := &source{floor: 1, failP: 0.2, rnd: rand.New(rand.NewPCG(seed, seed+1))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	b := New("t", src.load, policy(&wg, &closed, 7))
	const goroutines = 16
	got := make([][]int64, goroutines)
	var fails atomic.Int64
	var run sync.WaitGroup
	for g := range goroutines {
		run.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 7))
			for len(got[g]) < perG {
				ids, err := take(b, g, rnd)
				if err != nil {
					checkFailure(t, err, &fails)
					continue
				}
				got[g] = append(got[g], ids...)
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

func checkFailure(t *testing.T, err error, fails *atomic.Int64) {
	t.Helper()
	fails.Add(1)
	if !errors.Is(err, intf.ErrUnavailable) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("unexpected error: %v", err)
	}
}

// A range below the last one received is refused; the buffer keeps
// serving above it once a good range arrives.
func TestRangeBelowIsRefused(t *testing.T) {
	var wg sync.WaitGroup
	var closed atomic.Bool
	defer func() { closed.Store(true); wg.Wait() }()
	ranges := []Range{{10, 20}, {0, 10}, {20, 30}}
	var i atomic.Int64
	b := New("t", func(int64) (Range, int64, error) { return ranges[i.Add(1)-1], 1, nil }, policy(&wg, &closed, 10))
	ctx := context.Background()
	for want := int64(10); want < 20; want++ {
		id, err := b.Next(ctx)
		if err != nil || id != want {
			t.Fatalf("got %d, %v; want %d", id, err, want)
		}
	}
	wg.Wait() // the spare's load, [0, 10), has been refused
	if st := b.Status(); st.LastError == nil || st.Spare != 0 {
		t.Fatalf("the range below was not refused: %+v", st)
	}
	id, err := b.Next(ctx) // retries (RetryInterval 0): [20, 30)
	if err != nil || id != 20 {
		t.Fatalf("got %d, %v; want 20", id, err)
	}
}

// The hot path allocates nothing.
func TestTryNextAllocatesNothing(t *testing.T) {
	var wg sync.WaitGroup
	var closed atomic.Bool
	defer func() { closed.Store(true); wg.Wait() }()
	src := &source{floor: 1 << 30, rnd: rand.New(rand.NewPCG(1, 1))}
	var set Set
	set.Add("t", func() *Buffer { return New("t", src.load, policy(&wg, &closed, 1<<30)) })
	if _, err := set.Find("t").Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	set.Find("t") // the loaded range becomes the hot one
	if n := testing.AllocsPerRun(1000, func() {
		if _, took := set.TryNext("t"); took != Got {
			t.Fatal("not served from the loaded range")
		}
	}); n != 0 {
		t.Fatalf("TryNext allocates %v times per call", n)
	}
}

// checkUnique fails t when an ID of got (one list per goroutine) was
// served twice, or a goroutine's IDs do not strictly increase; it returns
// how many IDs there are.
func checkUnique(t *testing.T, got [][]int64) int {
	t.Helper()
	seen := map[int64]bool{}
	for g, ids := range got {
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("goroutine %d: id %d after %d", g, id, ids[i-1])
			}
			if seen[id] {
				t.Fatalf("id %d served twice", id)
			}
			seen[id] = true
		}
	}
	return len(seen)
}
