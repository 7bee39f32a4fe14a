package grayfail

import (
	"context"
	"sync"
	"time"
)

// Rec is one call: when it started and ended, its deadline and its error.
type Rec struct {
	Start, End time.Time
	Deadline   time.Duration
	Err        error
}

// Load runs callers goroutines, each calling call in a loop with a
// deadline of deadline (0: none) until stop is closed, and returns every
// call and the IDs issued. call returns the IDs it got.
func Load(stop <-chan struct{}, callers int, deadline time.Duration, call func(ctx context.Context, i int) ([]int64, error)) ([]Rec, []int64) {
	var (
		mu   sync.Mutex
		recs []Rec
		ids  []int64
		wg   sync.WaitGroup
	)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []Rec
			var got []int64
			for i := 0; ; i++ {
				select {
				case <-stop:
					mu.Lock()
					recs, ids = append(recs, mine...), append(ids, got...)
					mu.Unlock()
					return
				default:
				}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if deadline > 0 {
					ctx, cancel = context.WithTimeout(ctx, deadline)
				}
				start := time.Now()
				v, err := call(ctx, g*1_000_000+i)
				end := time.Now()
				cancel()
				mine = append(mine, Rec{Start: start, End: end, Deadline: deadline, Err: err})
				got = append(got, v...)
				if err != nil {
					time.Sleep(time.Millisecond) // a failing caller does not spin
				}
			}
		}()
	}
	wg.Wait()
	return recs, ids
}

// Duplicates counts the IDs issued more than once.
func Duplicates(ids []int64) int {
	seen := make(map[int64]struct{}, len(ids))
	d := 0
	for _, id := range ids {
		if _, ok := seen[id]; ok {
			d++
		}
		seen[id] = struct{}{}
	}
	return d
}

// stopAfter closes the returned channel after d.
func stopAfter(d time.Duration) chan struct{} {
	c := make(chan struct{})
	time.AfterFunc(d, func() { close(c) })
	return c
}
