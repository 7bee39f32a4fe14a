package rpcserver_test

import (
	"context"
	"log/slog"
	"net"
	"net/rpc"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

// slowBatches is an IdService whose GenIds waits for release (counting the
// calls inside) and whose GenId answers at once.
type slowBatches struct {
	intf.IdService
	n       atomic.Int64
	in      atomic.Int32
	release chan struct{}
}

func (s *slowBatches) GenId(context.Context) (intf.Id, error) { return intf.Id(s.n.Add(1)), nil }

func (s *slowBatches) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	s.in.Add(1)
	defer s.in.Add(-1)
	<-s.release
	return make([]intf.Id, n), nil
}

func serveSlow(t *testing.T) (*slowBatches, string) {
	t.Helper()
	svc := &slowBatches{release: make(chan struct{})}
	return svc, serve(t, svc, rpcserver.Options{})
}

// serve serves svc (batches up to 10) with o, quiet, until the test ends,
// and returns its address.
func serve(t *testing.T, svc intf.IdService, o rpcserver.Options) string {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	srv, err := rpcserver.New(rpcapi.NewReceiver(svc, 10), o)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return ln.Addr().String()
}

// A call that waits holds up none read after it on its connection: each
// runs on a worker of its own.
func TestSlowCallHoldsUpNoOther(t *testing.T) {
	svc, addr := serveSlow(t)
	c := dial(t, addr)
	slow := c.Go("IdService.GenIds", rpcapi.GenIdsArgs{Count: 1}, &rpcapi.GenIdsReply{}, nil)
	require.Eventually(t, func() bool { return svc.in.Load() == 1 }, 10*time.Second, time.Millisecond)
	for range 100 {
		genId(t, c)
	}
	select {
	case <-slow.Done:
		t.Fatal("the slow call returned before its release")
	default:
	}
	close(svc.release)
	<-slow.Done
	require.NoError(t, slow.Error)
}

// A burst of calls on one connection runs at once; afterwards at most
// MaxIdleWorkers workers stay beside the reading one, and none once the
// connection is closed.
func TestWorkersAfterBurst(t *testing.T) {
	svc, addr := serveSlow(t)
	base := runtime.NumGoroutine()
	c, err := rpc.Dial("tcp", addr)
	require.NoError(t, err)
	const burst = 200 // under the default MaxCallsPerConn
	calls := make([]*rpc.Call, burst)
	for i := range calls {
		calls[i] = c.Go("IdService.GenIds", rpcapi.GenIdsArgs{Count: 1}, &rpcapi.GenIdsReply{}, nil)
	}
	require.Eventually(t, func() bool { return svc.in.Load() == burst }, 10*time.Second, time.Millisecond,
		"every call of the burst in the service at once")
	close(svc.release)
	for _, call := range calls {
		<-call.Done
		require.NoError(t, call.Error)
	}
	// Beside base: the client's reading goroutine, the connection's
	// serving goroutine, the worker reading and the idle ones.
	most := base + 3 + rpcserver.MaxIdleWorkers
	goroutinesAtMost(t, most, "after the burst")
	for range 50 { // the connection still serves
		genId(t, c)
	}
	require.NoError(t, c.Close())
	goroutinesAtMost(t, base, "after the connection closed")
}

// goroutinesAtMost waits for the goroutines to be at most n, and fails
// with their stacks if they are not within 10 s. (Not require.Eventually:
// its own goroutines would count.)
func goroutinesAtMost(t *testing.T, n int, when string) {
	t.Helper()
	for start := time.Now(); runtime.NumGoroutine() > n; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %d goroutines, at most %d expected:\n%s", when, runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
	}
}

// Many callers on one connection, each reply paired with its call: no ID
// twice, each caller's IDs increasing, and a call of an unknown method
// answered with an error without ending the connection.
func TestConcurrentCallsOnOneConnection(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 9})
	c := dial(t, srv.Addr)
	const callers, calls = 32, 200
	ids := make([][]intf.Id, callers)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				if i%50 == 0 {
					var r rpcapi.GenIdReply
					assert.ErrorContains(t, c.Call("IdService.Nope", rpcapi.GenIdArgs{}, &r), "can't find method")
				}
				if g%2 == 0 {
					var r rpcapi.GenIdReply
					if !assert.NoError(t, c.Call("IdService.GenId", rpcapi.GenIdArgs{}, &r)) || !assert.Nil(t, r.Err) {
						return
					}
					ids[g] = append(ids[g], r.Id)
					continue
				}
				var r rpcapi.GenIdsReply
				if !assert.NoError(t, c.Call("IdService.GenIds", rpcapi.GenIdsArgs{Count: 3}, &r)) || !assert.Nil(t, r.Err) ||
					!assert.Len(t, r.Ids, 3) {
					return
				}
				ids[g] = append(ids[g], r.Ids...)
			}
		})
	}
	wg.Wait()
	seen := make(map[intf.Id]bool)
	for g, mine := range ids {
		for i, id := range mine {
			require.False(t, seen[id], "ID %d twice", id)
			seen[id] = true
			if i > 0 {
				require.Less(t, mine[i-1], id, "caller %d's IDs increase", g)
			}
		}
	}
	assert.Len(t, seen, callers/2*calls+callers/2*calls*3)
}
