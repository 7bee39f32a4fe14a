package generatorsuite_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Two generators on one store, many goroutines each, tiny ranges (many
// switches), the store failing on and off and callers giving up: no ID is
// issued twice and each goroutine's IDs strictly increase. The lock-free
// hot path (NextId) and the batches (NextIds) race with the switches.
func TestChurnNeverDuplicates(t *testing.T) {
	t.Parallel() // its own database; TestOutage, which stops the shared server, is serial: it runs before
	db := memDB(segtest.NewMem())
	small := func(s *segment.Settings) { s.MaxStep = 8 }
	f1 := newFixture(t, db, small, segstore.TagInfo{Tag: "c", MaxId: 1, Step: 3})
	f2 := newFixture(t, db, small)
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	chaos.Go(func() { // the store goes down and up; the retry interval passes
		for i := 0; ; i++ {
			select {
			case <-stop:
				f1.st.SetDown(false)
				f2.st.SetDown(false)
				return
			case <-time.After(200 * time.Microsecond):
			}
			f1.st.SetDown(i%4 == 0)
			f2.st.SetDown(i%5 == 0)
			f1.clock.Advance(time.Second)
			f2.clock.Advance(time.Second)
		}
	})
	const goroutines, perG = 8, 1500
	got := make([][]int64, 2*goroutines)
	var fails atomic.Int64
	var wg sync.WaitGroup
	for i := range got {
		g := []*segment.Generator{f1.g, f2.g}[i%2]
		wg.Go(func() {
			for n := 0; len(got[i]) < perG; n++ {
				ctx, cancel := context.WithCancel(context.Background())
				if n%7 == 0 {
					cancel()
				}
				var err error
				if n%3 == 0 {
					var ids []int64
					if ids, err = g.NextIds(ctx, "c", n%11+1); err == nil {
						got[i] = append(got[i], ids...)
					}
				} else {
					var id int64
					if id, err = g.NextId(ctx, "c"); err == nil {
						got[i] = append(got[i], id)
					}
				}
				cancel()
				if err != nil {
					fails.Add(1)
					if !errors.Is(err, intf.ErrUnavailable) && !errors.Is(err, context.Canceled) {
						assert.NoError(t, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	chaos.Wait()
	seen := map[int64]bool{}
	for _, ids := range got {
		requireIncreasing(t, ids)
		for _, id := range ids {
			require.False(t, seen[id], "duplicate %d", id)
			seen[id] = true
		}
	}
	assert.Greater(t, f1.st.Calls()+f2.st.Calls(), int64(500), "many range switches")
	t.Logf("%d IDs, %d loads, %d failed calls", len(seen), f1.st.Calls()+f2.st.Calls(), fails.Load())
}
