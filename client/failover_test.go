package client

import (
	"context"
	"errors"
	"fmt"
	"net/rpc"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

// Two servers with their own machine ids; the first is stopped while
// callers are busy: every call succeeds and no ID repeats.
func TestFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	a := rpctest.Start(t, rpctest.Config{Machine: 1})
	b := rpctest.Start(t, rpctest.Config{Machine: 2})
	c := newClient(t, []string{a.Addr, b.Addr})
	ctx := context.Background()

	const callers, perCaller = 8, 400
	var (
		mu   sync.Mutex
		ids  = make(map[intf.Id]struct{}, callers*perCaller)
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
		machines[id.Fields().Machine]++
	}
	assert.Positive(t, machines[1], "the first server took calls before it stopped")
	assert.Positive(t, machines[2], "the second took over")
	assert.True(t, c.eps[0].down.Load())
}

// What each error from a server makes of a call, for IdService calls and
// for segment calls. A fenced server (machine id lease lost: ErrFenced,
// sent as CodeUnavailable) is failed over like any server that cannot
// issue safely.
func TestVerdicts(t *testing.T) {
	wire := func(err error) error { return rpcapi.ToWire(err) }
	cases := []struct {
		name         string
		err          error
		id, segments verdict
	}{
		{"no answer", &rpcapi.TransportError{Method: "dial", Err: errors.New("connection refused")}, markDown, markDown},
		{"fenced", wire(fmt.Errorf("genid: %w", intf.ErrFenced)), markDown, skip},
		{"unavailable", wire(intf.ErrUnavailable), markDown, skip},
		{"closed", wire(intf.ErrClosed), markDown, skip},
		{"not persisted", wire(intf.ErrNotPersisted), markDown, answer},
		{"clock behind", wire(intf.ErrClockBehind), markDown, answer},
		{"bad count", wire(intf.CheckRange("count", 0, 1, intf.MaxBatch)), answer, answer},
		{"bad tag", wire(intf.CheckTag("a b")), answer, answer},
		{"unknown tag", wire(intf.ErrUnknownTag), answer, answer},
		{"segment mode off", wire(rpcapi.ErrSegmentOff), answer, answer},
		{"time overflow", wire(intf.ErrTimeOverflow), answer, answer},
		{"deadline", wire(context.DeadlineExceeded), answer, answer},
		{"internal", wire(errors.New("disk on fire")), answer, answer},
		{"caller's context", fmt.Errorf("vesta rpc: %w", context.Canceled), answer, answer},
		{"no such method (an older server)", rpc.ServerError("rpc: can't find method IdService.SegmentNextIds"), answer, answer},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.id, idVerdict(tc.err), "IdService call: %s", tc.name)
		assert.Equal(t, tc.segments, segmentVerdict(tc.err), "segment call: %s", tc.name)
	}
}
