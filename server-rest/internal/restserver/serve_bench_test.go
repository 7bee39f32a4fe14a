package restserver_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkServeGenId measures one GET /genid over loopback TCP, as the
// rest-throughput check loads it (64 keep-alive connections), through
// what server-rest serves a connection with (Serving: the connection
// limits, the JSON error wrapper, net/http with its
// timeouts, the access log check, the route and the ID service), beside
// "bare": a net/http server with no timeouts answering a constant, as the
// check's baseline. Each connection's client is a minimal HTTP/1.1 reader
// in the same process, so cpu-ns/op (the process's CPU time per request,
// which other load on a shared machine disturbs far less than ns/op) is
// the client's cost and the server's: the difference of the two
// sub-benchmarks is what server-rest adds per request. No threshold is
// asserted.
func BenchmarkServeGenId(b *testing.B) {
	b.Run("rest", func(b *testing.B) {
		// testing runs the benchmark twice (b.N 1, then N), each with 64
		// fresh connections: the first run's may not be closed on the
		// server when the second dials, beyond a cap of 64 per IP.
		srv := newServer(testConfig(b, "--max-conns-per-ip", "1024"), nil)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(b, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln) }()
		b.Cleanup(func() {
			cancel()
			<-done
		})
		waitReady(b, "http://"+ln.Addr().String())
		loadGenId(b, ln.Addr().String())
	})
	b.Run("bare", func(b *testing.B) {
		body := []byte("1940201739163701249")
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
			_, _ = w.Write(body)
		})}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(b, err)
		go func() { _ = hs.Serve(ln) }()
		b.Cleanup(func() { _ = hs.Close() })
		loadGenId(b, ln.Addr().String())
	})
}

// loadGenId sends GET /genid on 64 keep-alive connections to addr, one
// request at a time each, until b.N are answered 200.
func loadGenId(b *testing.B, addr string) {
	b.ReportAllocs()
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // RunParallel runs parallelism x GOMAXPROCS goroutines
	cpu0, ok := processCPU()
	b.ResetTimer()
	defer func() {
		if cpu1, ok1 := processCPU(); ok && ok1 {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}()
	b.RunParallel(func(pb *testing.PB) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		req := []byte("GET /genid HTTP/1.1\r\nHost: bench\r\n\r\n")
		for pb.Next() {
			if _, err := c.Write(req); err != nil {
				b.Error(err)
				return
			}
			if err := readOK(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// readOK reads one response with a Content-Length and fails unless it is
// a 200.
func readOK(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return errors.New("not a 200: " + string(line))
	}
	n := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if n < 0 {
		return errors.New("no Content-Length")
	}
	_, err = r.Discard(n)
	return err
}

// waitReady polls base's /readyz until it answers 200 (Serve constructs
// the ID service in the background).
func waitReady(b *testing.B, base string) {
	b.Helper()
	// No keep-alive: an idle connection left open would be one more of
	// 127.0.0.1's, beyond maxConnsPerIP with the load's 64.
	c := http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; ; i++ {
		resp, err := c.Get(base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if i == 1000 {
			b.Fatalf("%s/readyz: not ready (%v)", base, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
