package segbuf

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// next is how the owners take one ID: the set's fast path, then the
// buffer's slow one.
func next(ctx context.Context, s *Set, name string) (int64, error) {
	switch id, took := s.TryNext(name); took {
	case Got:
		return id, nil
	case GotAtThreshold:
		s.Kick(name)
		return id, nil
	}
	b := s.Find(name)
	if b == nil {
		return 0, errDown
	}
	return b.Next(ctx)
}

// Goroutines take IDs through the set's fast path with two different
// strings of one name (so the hot range's key changes), from tiny ranges
// switched thousands of times, while another goroutine keeps replacing
// the map (which clears the hot range): no ID is served twice, and each
// goroutine's IDs strictly increase. Run under -race.
func TestSetFastPathNoDuplicateUnderChurn(t *testing.T) {
	src := &source{floor: 3, rnd: rand.New(rand.NewPCG(3, 4))}
	var wg sync.WaitGroup
	var closed atomic.Bool
	var set Set
	b := set.Add("tag", func() *Buffer { return New("tag", src.load, policy(&wg, &closed, 50)) })
	names := []string{"tag", strings.Clone("tag")}
	const goroutines, perG = 8, 4000
	got := make([][]int64, goroutines)
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				set.Store(map[string]*Buffer{"tag": b})
			}
		}
	})
	var run sync.WaitGroup
	for g := range goroutines {
		run.Go(func() {
			name := names[g%2]
			for len(got[g]) < perG {
				id, err := next(context.Background(), &set, name)
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], id)
			}
		})
	}
	run.Wait()
	close(stop)
	churn.Wait()
	closed.Store(true)
	wg.Wait()
	checkUnique(t, got)
	if src.calls.Load() < 100 {
		t.Fatalf("only %d loads: the test did not switch ranges often", src.calls.Load())
	}
}

// The fast path serves a name only by the very string its range was
// made with, never a removed name or a closed set, and never an ID past
// the range, even when its counter wraps past math.MaxInt64.
func TestSetFastPathChecks(t *testing.T) {
	var wg sync.WaitGroup
	var closed atomic.Bool
	defer func() { closed.Store(true); wg.Wait() }()
	start := int64(math.MaxInt64 - 100)
	var set Set
	set.Add("tag", func() *Buffer {
		return New("tag", func(int64) (Range, int64, error) {
			return Range{Start: start, End: math.MaxInt64}, 100, nil
		}, policy(&wg, &closed, 100))
	})
	if _, took := set.TryNext("tag"); took != Dry {
		t.Fatalf("an empty set served: %v", took)
	}
	ctx := context.Background()
	if id, err := set.Find("tag").Next(ctx); err != nil || id != start {
		t.Fatalf("first ID %d, %v; want %d", id, err, start)
	}
	set.Find("tag")
	if id, took := set.TryNext("tag"); took != Got || id != start+1 {
		t.Fatalf("fast path gave %d, %v; want %d, Got", id, took, start+1)
	}
	other := strings.Clone("tag")
	if _, took := set.TryNext(other); took != Dry {
		t.Fatal("served a string other than the range's key")
	}
	if _, took := set.TryNext("ta"); took != Dry {
		t.Fatal("served a prefix of the key")
	}
	// Use the range up; the adds past its end, and past MaxInt64, fail.
	for range 200 {
		if id, took := set.TryNext("tag"); took != Dry && (id < start || id >= math.MaxInt64) {
			t.Fatalf("served %d outside [%d, MaxInt64)", id, start)
		}
	}
	sp := set.hot.Load()
	sp.last.Store(math.MaxInt64)
	if id, took := set.TryNext("tag"); took != Dry {
		t.Fatalf("a wrapped counter served %d", id)
	}
	set.Store(map[string]*Buffer{})
	if _, took := set.TryNext("tag"); took != Dry {
		t.Fatal("served a removed name")
	}
	set.Kick("tag") // a name the set no longer has: nothing to load
	set.Close()
	if _, took := set.TryNext("tag"); took != Dry {
		t.Fatal("served from a closed set")
	}
}

// A range loaded before any Find (a buffer just added and filled, as the
// client's first call does, or loaded at start) takes the key of the
// first string Find is asked with: the fast path serves it from then on,
// not only from the next range.
func TestSetFastPathAfterARangeLoadedBeforeFind(t *testing.T) {
	var wg sync.WaitGroup
	var closed atomic.Bool
	defer func() { closed.Store(true); wg.Wait() }()
	var set Set
	b := set.Add(strings.Clone("tag"), func() *Buffer {
		return New("tag", func(int64) (Range, int64, error) { return Range{Start: 1, End: 1 << 40}, 1 << 40, nil },
			policy(&wg, &closed, 1<<40))
	})
	if _, err := b.Next(context.Background()); err != nil { // loads the first range: no Find yet
		t.Fatal(err)
	}
	name := "tag"
	if _, took := set.TryNext(name); took != Dry {
		t.Fatalf("served before a Find: %v", took)
	}
	if set.Find(name) != b {
		t.Fatal("Find did not find the buffer")
	}
	if id, took := set.TryNext(name); took != Got || id != 2 {
		t.Fatalf("after a Find the fast path gave %d, %v; want 2, Got", id, took)
	}
}
