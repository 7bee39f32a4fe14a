package segbuf_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// row is a leaf_alloc row kept in memory: each load advances maxId by the
// step asked for (the row's own when 0), as segstore.Store.Alloc does.
type row struct {
	mu           sync.Mutex
	maxId, floor int64
}

func (r *row) load(step int64) (segbuf.Range, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if step <= 0 {
		step = r.floor
	}
	r.maxId += step
	return segbuf.Range{Start: r.maxId - step, End: r.maxId}, r.floor, nil
}

// A Set holds one Buffer per tag. Callers take an ID with TryNext (the
// lock-free fast path) and, when it finds nothing, Find the tag's Buffer
// and call Next, which loads or switches ranges. The Buffer loads the
// next range in the background once a tenth of the current one is taken;
// ranges that go fast grow (up to MaxStep).
func ExampleSet() {
	var loads sync.WaitGroup
	var closed atomic.Bool
	policy := &segbuf.Policy{
		MaxStep: 100, WaitTimeout: time.Second, RetryInterval: time.Second,
		Now: func() time.Time { return time.Unix(0, 0) }, // a stopped clock: every range "went fast"
		Go: func(f func()) bool {
			if closed.Load() {
				return false
			}
			loads.Go(f)
			return true
		},
		Closed: closed.Load,
		Exhausted: func(name string, cause error, wait time.Duration) error {
			return errors.Join(fmt.Errorf("tag %q: no IDs within %s", name, wait), cause)
		},
	}
	src := &row{maxId: 1, floor: 10}
	var set segbuf.Set
	tag := "order"
	set.Add(tag, func() *segbuf.Buffer { return segbuf.New(tag, src.load, policy) })

	next := func(ctx context.Context, tag string) (int64, error) {
		switch id, took := set.TryNext(tag); took {
		case segbuf.Got:
			return id, nil
		case segbuf.GotAtThreshold:
			set.Kick(tag) // start loading the spare range
			return id, nil
		}
		b := set.Find(tag)
		if b == nil {
			return 0, fmt.Errorf("unknown tag %q", tag)
		}
		return b.Next(ctx)
	}

	var ids []int64
	for range 25 {
		id, err := next(context.Background(), tag)
		if err != nil {
			fmt.Println(err)
			return
		}
		ids = append(ids, id)
	}
	fmt.Println(ids)
	_, err := next(context.Background(), "invoice")
	fmt.Println(err)

	loads.Wait() // let the background load of the spare finish
	st := set.Find(tag).Status()
	fmt.Printf("current %+v, spare %+v, last step %d, issued %d\n", st.CurrentRange, st.SpareRange, st.Step, st.Issued)

	set.Close()
	closed.Store(true)
	loads.Wait()
	// Output:
	// [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25]
	// unknown tag "invoice"
	// current {Start:11 Next:26 End:31}, spare {Start:31 Next:31 End:71}, last step 40, issued 25
}
