package client

import (
	"context"
	"fmt"
	"net/rpc"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
)

// Bare is the baseline: a net/rpc service that returns a counter, with no
// ID logic, no error mapping and no client wrapper.
type Bare struct{ n atomic.Int64 }

// Next returns the next counter value.
func (b *Bare) Next(_ struct{}, reply *int64) error {
	*reply = b.n.Add(1)
	return nil
}

// startBare serves Bare on 127.0.0.1:0 (servePlainRcvr), dials pool
// clients of it (as many as a Client's pool) and returns one bare call:
// Bare.Next on the next client in turn.
func startBare(b *testing.B, pool int) func() error {
	addr := servePlainRcvr(b, "Bare", &Bare{})
	clients := make([]*rpc.Client, pool)
	for i := range clients {
		var err error
		if clients[i], err = rpc.Dial("tcp", addr); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { clients[i].Close() })
	}
	var rr atomic.Uint32
	return func() error {
		var v int64
		return clients[int(rr.Add(1))%pool].Call("Bare.Next", struct{}{}, &v)
	}
}

// callers runs b.N calls of f spread over n goroutines and reports calls/s.
func callers(b *testing.B, n int, f func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	b.ResetTimer()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := f(); err != nil {
					failed.CompareAndSwap(nil, errPtr(err))
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// errPtr keeps callers' loop free of allocations: only a failure escapes.
func errPtr(err error) *error { return &err }

// sliceOf is how many calls each side makes before the other takes its
// turn: short enough (10-50ms) that both see the same load from the rest of
// the machine, long enough (16 calls per caller) for steady concurrency.
func sliceOf(callers int) int { return max(256, 16*callers) }

// cpuTime is the CPU time (user + system) this process has used: client
// and server both, as they share the process. Unlike the wall time it does
// not count the time the machine gave to other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runCalls makes k calls of f over n goroutines and returns the wall and
// CPU time.
func runCalls(n, k int, f func() error) (wall, cpu time.Duration, err error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	start, startCPU := time.Now(), cpuTime()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(k) {
				if err := f(); err != nil {
					failed.CompareAndSwap(nil, errPtr(err))
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return 0, 0, *err
	}
	return time.Since(start), cpuTime() - startCPU, nil
}

// paired makes b.N calls of each of bare and ours, alternating in slices
// (in turn first), and reports both rates, ours/bare by wall time
// ("ratio") and by CPU time per call ("cpu-ratio").
func paired(b *testing.B, n int, bare, ours func() error) {
	var tBare, tOurs, cBare, cOurs time.Duration
	b.ResetTimer()
	slice := sliceOf(n)
	for done, round := 0, 0; done < b.N; done, round = done+slice, round+1 {
		k := min(slice, b.N-done)
		fs := []func() error{bare, ours}
		ts := []*time.Duration{&tBare, &tOurs}
		cs := []*time.Duration{&cBare, &cOurs}
		if round%2 == 1 {
			fs[0], fs[1], ts[0], ts[1], cs[0], cs[1] = fs[1], fs[0], ts[1], ts[0], cs[1], cs[0]
		}
		for i := range fs {
			wall, cpu, err := runCalls(n, k, fs[i])
			if err != nil {
				b.Fatal(err)
			}
			*ts[i] += wall
			*cs[i] += cpu
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(b.N)/tBare.Seconds(), "bare-calls/s")
	b.ReportMetric(float64(b.N)/tOurs.Seconds(), "calls/s")
	b.ReportMetric(tBare.Seconds()/tOurs.Seconds(), "ratio")
	b.ReportMetric(float64(cOurs.Nanoseconds())/float64(b.N), "cpu-ns/call")
	b.ReportMetric(float64(cBare.Nanoseconds())/float64(b.N), "bare-cpu-ns/call")
	b.ReportMetric(cBare.Seconds()/cOurs.Seconds(), "cpu-ratio")
}

// BenchmarkGenId compares GenId through Client against the bare service
// (same number of connections), interleaved, with 1 and 64 callers, on a
// server with the default populator (lock) and, at 64 callers, with packed
// (CAS: no goroutine parks when 64 server goroutines contend). The
// "secured" rows run the lock server with everything server-rpc turns on:
// a token checked on every call, a quota (a rate far above what is asked:
// every call takes from it, none is refused), a call observer as the
// metrics' (benchObserver) and the server's call timeout (its default), the
// client sending its token and its call timeout as always. The bare
// service has none of these.
func BenchmarkGenId(b *testing.B) {
	bareCall := startBare(b, defaultPoolSize)
	ctx := context.Background()
	for _, tc := range []struct {
		populator string
		secured   bool
		callers   []int
	}{{"lock", false, []int{1, 64}}, {"packed", false, []int{64}}, {"lock", true, []int{1, 64}}} {
		cfg, opts, name := rpctest.Config{Machine: 1, Populator: tc.populator}, []Option{WithLogger(quiet)}, "populator="+tc.populator
		if tc.secured {
			cfg, opts, name = secured(b, cfg), append(opts, WithToken(benchToken)), name+"/secured"
		}
		srv := rpctest.Start(b, cfg)
		c, err := New([]string{srv.Addr}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		oursCall := func() error { _, err := c.GenId(ctx); return err }
		for _, n := range tc.callers {
			b.Run(fmt.Sprintf("%s/callers=%d", name, n), func(b *testing.B) { paired(b, n, bareCall, oursCall) })
		}
		c.Close()
	}
}

const benchToken = "vesta_bench_token_0123456789"

// secured adds to c what server-rpc runs with: a guard requiring
// benchToken with the genid scope and a quota that every call takes from
// but none exceeds, the metrics' observer and the default call timeout.
func secured(b *testing.B, c rpctest.Config) rpctest.Config {
	p, err := access.NewPolicy([]access.Client{{Name: "bench", Tokens: [][32]byte{access.HashToken(benchToken)},
		Scopes: []access.Scope{access.ScopeGenId}, Rate: access.MaxRate}})
	if err != nil {
		b.Fatal(err)
	}
	if c.Guard, err = access.NewGuard(access.Options{Policy: p, Logger: quiet}); err != nil {
		b.Fatal(err)
	}
	c.Receiver = []rpcapi.ReceiverOption{rpcapi.WithObserver(&benchObserver{}), rpcapi.WithCallTimeout(serverdefaults.CallTimeout)}
	return c
}

// benchObserver stands in for server-rpc's Prometheus observer (rpcadmin,
// in the server's module: the client's module links no Prometheus): a
// count per method and code and a latency sum, atomic adds as a
// Prometheus counter and histogram make.
type benchObserver struct {
	calls   [8][16]atomic.Int64
	ids     atomic.Int64
	elapsed atomic.Int64
}

func (o *benchObserver) ObserveCall(method string, ids int, err *rpcapi.Error, elapsed time.Duration) {
	code := 0
	if err != nil {
		code = int(err.Code) & 15
	}
	o.calls[len(method)&7][code].Add(1)
	o.ids.Add(int64(ids))
	o.elapsed.Add(int64(elapsed))
}

// BenchmarkGenIdsBatch takes batches of 1000 IDs with 4 callers. Besides
// IDs/s over the run, it reports the IDs issued in each whole second of
// the run (the first and last, partial, seconds left out) as a share of
// the max-peak budget of 2^20 per second: the budget, not a rate, is what
// the service enforces, so this is the fair measure. Run it for 4s or more.
func BenchmarkGenIdsBatch(b *testing.B) {
	const batch = 1000
	srv := rpctest.Start(b, rpctest.Config{Machine: 2})
	c, err := New([]string{srv.Addr}, WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var mu sync.Mutex
	perSecond := map[int64]int{}
	callers(b, 4, func() error {
		ids, err := c.GenIds(ctx, batch)
		if err != nil {
			return err
		}
		first, last := timeOf(ids[0]), timeOf(ids[len(ids)-1])
		mu.Lock()
		if first == last {
			perSecond[first] += len(ids)
		} else {
			for _, id := range ids {
				perSecond[timeOf(id)]++
			}
		}
		mu.Unlock()
		return nil
	})
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "ids/s")
	secs := make([]int64, 0, len(perSecond))
	for s := range perSecond {
		secs = append(secs, s)
	}
	slices.Sort(secs)
	if len(secs) >= 3 {
		var full []int
		for _, s := range secs[1 : len(secs)-1] {
			full = append(full, perSecond[s])
		}
		slices.Sort(full)
		b.ReportMetric(float64(full[len(full)/2]), "ids/full-second")
		b.ReportMetric(100*float64(full[len(full)/2])/float64(1<<20), "%budget")
	}
}

func timeOf(id intf.Id) int64 { return id.Fields().Time }

// BenchmarkBufferedGenId is GenId served from a 50,000-ID buffer refilled
// with batches of 10,000.
func BenchmarkBufferedGenId(b *testing.B) {
	srv := rpctest.Start(b, rpctest.Config{Machine: 3})
	c, err := New([]string{srv.Addr}, WithLogger(quiet), WithBuffer(50_000, 10_000))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("callers=%d", n), func(b *testing.B) {
			callers(b, n, func() error { _, err := c.GenId(ctx); return err })
		})
	}
}
