package client

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcserver/rpctest"
)

// Two servers with their own machine ids; the first is stopped while
// callers are busy: every call succeeds and no ID repeats.
func TestFailoverUnderLoad(t *testing.T) {
	a := rpctest.Start(t, rpctest.Config{Machine: 1})
	b := rpctest.Start(t, rpctest.Config{Machine: 2})
	c := newClient(t, []string{a.Addr, b.Addr})
	ctx := context.Background()

	const callers, perCaller = 8, 400
	var (
		mu   sync.Mutex
		ids  = make(map[int64]struct{}, callers*perCaller)
		errs []error
		wg   sync.WaitGroup
	)
	halfway := make(chan struct{})
	var once sync.Once
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perCaller {
				if g == 0 && i == perCaller/2 {
					once.Do(func() { close(halfway) })
				}
				id, err := c.GenId(ctx)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					ids[id] = struct{}{}
				}
				mu.Unlock()
			}
		}()
	}
	<-halfway
	require.NoError(t, a.Stop())
	wg.Wait()

	require.Empty(t, errs)
	assert.Len(t, ids, callers*perCaller, "no duplicates")
	machines := map[int64]int{}
	for id := range ids {
		machines[intf.LayoutOfId(id).Machine.Get(uint64(id))]++
	}
	assert.Positive(t, machines[1], "the first server took calls before it stopped")
	assert.Positive(t, machines[2], "the second took over")
	assert.True(t, c.eps[0].down.Load())
}
