package rpcadmin

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// unstarted is a runtime never started: /readyz says starting.
func unstarted() *runtime.Runtime { return runtime.New(runtime.Options{}) }

// startable is a runtime whose ID service is a real one without a data
// dir, closed at the test's end.
func startable(t *testing.T) *runtime.Runtime {
	quiet := slog.New(slog.DiscardHandler)
	rt := runtime.New(runtime.Options{Logger: quiet, Start: func(ctx context.Context) (runtime.Service, error) {
		return service.New(ctx, service.Settings{Machine: 5, NoDataDir: true, Logger: quiet})
	}})
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt
}

func fetch(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// /readyz and vesta_ready are the runtime's readiness (its states are
// tested in internal/server/runtime): starting → ready → stopping;
// /healthz is 200 throughout.
func TestReadiness(t *testing.T) {
	rt := startable(t)
	a, err := New(Options{Type: intf.MaxPeak, Runtime: rt})
	require.NoError(t, err)
	h := a.Handler()
	step := func(wantCode int, wantStatus string) {
		t.Helper()
		code, body := fetch(t, h, "/readyz")
		assert.Equal(t, wantCode, code, body)
		assert.Contains(t, body, `"status":"`+wantStatus+`"`)
		code, _ = fetch(t, h, "/healthz")
		assert.Equal(t, http.StatusOK, code)
		_, m := fetch(t, h, "/metrics")
		want := "vesta_ready 0"
		if wantStatus == "ready" {
			want = "vesta_ready 1"
		}
		assert.Contains(t, m, want)
	}
	step(http.StatusServiceUnavailable, "starting")
	require.NoError(t, rt.Start(context.Background()))
	step(http.StatusOK, "ready")
	rt.Drain()
	step(http.StatusServiceUnavailable, "stopping")
}

func TestNewRefusesABadType(t *testing.T) {
	_, err := New(Options{Type: 7, Runtime: unstarted()})
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	_, err = New(Options{Type: intf.MaxPeak})
	assert.ErrorContains(t, err, "Runtime is required")
}

// Calls are counted by method and code; only GenId and GenIds count as
// Vesta IDs issued.
func TestObserveCall(t *testing.T) {
	a, err := New(Options{Type: intf.MinGranularity, Runtime: unstarted()})
	require.NoError(t, err)
	a.ObserveCall(rpcapi.MethodGenIds, 10, nil, time.Millisecond)
	a.ObserveCall(rpcapi.MethodGenId, 0, &rpcapi.Error{Code: rpcapi.CodeNotPersisted}, time.Millisecond)
	a.ObserveCall(rpcapi.MethodSegmentNextIds, 4, nil, time.Millisecond)
	a.ObserveCall("Future", 0, nil, time.Millisecond)
	_, m := fetch(t, a.Handler(), "/metrics")
	for _, line := range []string{
		`vesta_rpc_calls_total{code="ok",method="GenIds"} 1`,
		`vesta_rpc_calls_total{code="not_persisted",method="GenId"} 1`,
		`vesta_rpc_calls_total{code="ok",method="SegmentNextIds"} 1`,
		`vesta_rpc_calls_total{code="ok",method="Future"} 1`,
		`vesta_ids_issued_total{type="min-granularity"} 10`,
		`vesta_rpc_call_duration_seconds_count{method="GenIds"} 1`,
		`vesta_ids_capacity_per_second 1.024e+06`,
	} {
		assert.Contains(t, m, line+"\n")
	}
}

// Serve ends cleanly when its context does.
func TestServeStops(t *testing.T) {
	a, err := New(Options{Type: intf.MaxPeak, Runtime: unstarted()})
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(nil)
	ln := srv.Listener // a loopback listener on a free port
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.True(t, strings.Contains(string(b), `"ok"`))
	cancel()
	assert.NoError(t, <-done)
}

// The cost of counting one call, on the call's goroutine.
func BenchmarkObserveCall(b *testing.B) {
	a, err := New(Options{Type: intf.MaxPeak, Runtime: unstarted()})
	require.NoError(b, err)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.ObserveCall(rpcapi.MethodGenId, 1, nil, time.Microsecond)
		}
	})
}

// steppingClock moves 10 µs at every read, so that a benchmark never
// uses up a time unit's sequence and waits for the next one.
type steppingClock struct{ now atomic.Int64 }

func (c *steppingClock) NowNanos() int64 { return c.now.Add(10_000) }
func (c *steppingClock) WaitUntil(_ context.Context, t int64) error {
	for cur := c.now.Load(); cur < t && !c.now.CompareAndSwap(cur, t); cur = c.now.Load() {
	}
	return nil
}

// A GenId call through the receiver, without and with the admin's
// metrics: the price of observing a call (scripts/bench-rpc.sh measures
// whole calls over TCP).
func BenchmarkReceiverGenId(b *testing.B) {
	clock := &steppingClock{}
	clock.now.Store(time.Now().UnixNano())
	svc, err := service.New(context.Background(), service.Settings{Machine: 1, NoDataDir: true, Clock: clock})
	require.NoError(b, err)
	defer svc.Close()
	a, err := New(Options{Type: intf.MaxPeak, Runtime: unstarted()})
	require.NoError(b, err)
	for name, opts := range map[string][]rpcapi.ReceiverOption{
		"unobserved": nil,
		"observed":   {rpcapi.WithObserver(a)},
	} {
		r := rpcapi.NewReceiver(svc, 0, opts...)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var reply rpcapi.GenIdReply
				if err := r.GenId(rpcapi.GenIdArgs{}, &reply); err != nil || reply.Err != nil {
					b.Fatal(err, reply.Err)
				}
			}
		})
	}
}

// One address holds at most MaxConnsPerIP admin connections: the next is
// closed at accept and counted in /metrics.
func TestServeCapsConnectionsPerIP(t *testing.T) {
	a, err := New(Options{Type: intf.MaxPeak, MaxConnsPerIP: 2, Runtime: unstarted()})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	get := func(c net.Conn) error {
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	for range 2 { // held open: HTTP/1.1 keeps them
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, get(c))
	}
	over, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer over.Close()
	assert.Error(t, get(over), "the third connection from 127.0.0.1 is closed")
	_, m := fetch(t, a.Handler(), "/metrics")
	assert.Contains(t, m, "vesta_admin_connections_refused_total 1\n")
}
