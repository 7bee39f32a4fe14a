package client

import (
	"context"
	"net"
	"net/rpc"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

// BenchmarkGenIdLayers splits the cost of one GenId at 1 caller over the
// layers it crosses, each row paired with bare net/rpc as in BenchmarkGenId
// (ratio = bare's time / the row's). Going down the rows adds one layer:
//
//   - wire: a net/rpc client and server (net/rpc's own gob codec) with
//     rpcapi's Receiver and wire types over a counter (no ID logic);
//   - rpcserver: the same behind rpcserver (message limits, read and write
//     deadlines, calls in flight bounded, calls on workers instead of a
//     goroutine per call);
//   - service: the real ID service (lock populator) instead of the
//     counter, the call carrying a timeout as the client sends one (which
//     the server runs the call with: a ctxtime.Deadline); service-untimed
//     is the same call without it;
//   - conn: rpcapi.NewNetConn instead of the net/rpc client (bounded
//     sends, the context's deadline);
//   - client: client.New (pool 1, its call timeout, fail-over);
//   - secured: the token, the quota, the observer and the server's call
//     timeout on (secured).
//
// The machine's noise (±0.05 per run on 2 noisy cores) is as large as
// most steps: compare medians of -count 6 or more.
func BenchmarkGenIdLayers(b *testing.B) {
	bareCall := startBare(b, 1)
	counter := &counterService{}
	srv := rpctest.Start(b, rpctest.Config{Machine: 1})
	sec := rpctest.Start(b, secured(b, rpctest.Config{Machine: 2}))
	rows := []struct {
		name string
		call func() error
	}{
		{"wire", rpcCall(b, servePlain(b, rpcapi.NewReceiver(counter, 10_000)), 0)},
		{"rpcserver", rpcCall(b, serveRPC(b, rpcapi.NewReceiver(counter, 10_000)), 0)},
		{"service", rpcCall(b, srv.Addr, defaultCallTimeout)},
		{"service-untimed", rpcCall(b, srv.Addr, 0)},
		{"conn", connCall(b, srv.Addr)},
		{"client", clientCall(b, srv.Addr)},
		{"secured", clientCall(b, sec.Addr, WithToken(benchToken))},
	}
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) { paired(b, 1, bareCall, r.call) })
	}
}

// counterService is an intf.IdService whose GenId is a counter: the
// layers without the ID logic.
type counterService struct {
	intf.IdService // the other methods: not called
	n              atomic.Int64
}

func (s *counterService) GenId(context.Context) (intf.Id, error) { return intf.Id(s.n.Add(1)), nil }

// servePlain serves recv with net/rpc's own server and codec.
func servePlain(b *testing.B, recv *rpcapi.Receiver) string {
	return servePlainRcvr(b, rpcapi.ServiceName, recv)
}

// servePlainRcvr serves rcvr as name with net/rpc's own server and codec.
func servePlainRcvr(b *testing.B, name string, rcvr any) string {
	srv := rpc.NewServer()
	if err := srv.RegisterName(name, rcvr); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return // closed by the cleanup
			}
			go srv.ServeConn(nc)
		}
	}()
	return ln.Addr().String()
}

// serveRPC serves recv with rpcserver and its default limits.
func serveRPC(b *testing.B, recv *rpcapi.Receiver) string {
	srv, err := rpcserver.New(recv, rpcserver.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Shutdown(context.Background()) })
	return ln.Addr().String()
}

// lazyClient returns a net/rpc client of addr, dialled at its first use:
// a connection dialled at the start would idle past the server's
// first-byte timeout while the rows before it run. The cleanup closes it.
func lazyClient(b *testing.B, addr string) func() (*rpc.Client, error) {
	var c *rpc.Client
	b.Cleanup(func() {
		if c != nil {
			c.Close()
		}
	})
	return func() (*rpc.Client, error) {
		if c == nil {
			var err error
			if c, err = rpc.Dial("tcp", addr); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
}

// rpcCall calls GenId with a net/rpc client, sending timeout as the
// caller's time left (0: none).
func rpcCall(b *testing.B, addr string, timeout time.Duration) func() error {
	client := lazyClient(b, addr)
	return func() error {
		c, err := client()
		if err != nil {
			return err
		}
		var reply rpcapi.GenIdReply
		if err := c.Call(rpcapi.ServiceName+".GenId", rpcapi.GenIdArgs{Timeout: timeout}, &reply); err != nil {
			return err
		}
		if reply.Err != nil {
			return reply.Err
		}
		return nil
	}
}

// connCall calls GenId through rpcapi.NewNetConn (dialled at its first
// call, as lazyClient) with the client's call timeout as the context's
// deadline.
func connCall(b *testing.B, addr string) func() error {
	var c *rpcapi.Conn
	b.Cleanup(func() {
		if c != nil {
			c.Close()
		}
	})
	return func() error {
		if c == nil {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				return err
			}
			c = rpcapi.NewNetConn(nc, rpcapi.ServiceName)
		}
		ctx, cancel := context.WithTimeout(context.Background(), defaultCallTimeout)
		defer cancel()
		_, err := c.GenId(ctx)
		return err
	}
}

// clientCall calls GenId through a Client of one connection (it dials at
// its first call).
func clientCall(b *testing.B, addr string, opts ...Option) func() error {
	c, err := New([]string{addr}, append([]Option{WithLogger(quiet), WithPoolSize(1)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	return func() error { _, err := c.GenId(ctx); return err }
}

// BenchmarkBareSpin calibrates what extra work per call costs the ratio:
// a bare net/rpc service that spins for 1, 2 or 4 µs per call before it
// answers, paired with the plain bare service. Its ratio is what that much
// work on the call's path costs, whoever does it.
func BenchmarkBareSpin(b *testing.B) {
	bareCall := startBare(b, 1)
	for _, d := range []time.Duration{time.Microsecond, 2 * time.Microsecond, 4 * time.Microsecond} {
		addr := servePlainRcvr(b, "Bare", &spinningBare{spin: d})
		b.Run("spin="+d.String(), func(b *testing.B) {
			client := lazyClient(b, addr)
			paired(b, 1, bareCall, func() error {
				c, err := client()
				if err != nil {
					return err
				}
				var v int64
				return c.Call("Bare.Next", struct{}{}, &v)
			})
		})
	}
}

// spinningBare is Bare with spin of busy work per call.
type spinningBare struct {
	Bare
	spin time.Duration
}

// Next spins, then returns the next counter value.
func (s *spinningBare) Next(args struct{}, reply *int64) error {
	for start := time.Now(); time.Since(start) < s.spin; {
	}
	return s.Bare.Next(args, reply)
}

// BenchmarkGenIdAlone runs GenId through one path alone, unpaired, for
// CPU profiles and syscall counts (docs/benchmarks.md, "Third pass"):
// bare net/rpc, or client.New (pool 1 at one caller, the default pool at
// 64) over the real service, with everything secured turns on or not.
//
//	go test -run '^$' -bench 'BenchmarkGenIdAlone/client/callers=1$' -cpu 1 \
//	  -benchtime 200000x -cpuprofile cpu.out ./client && go tool pprof -traces client.test cpu.out
func BenchmarkGenIdAlone(b *testing.B) {
	for _, callers := range []int{1, 64} {
		for _, row := range []string{"bare", "client", "secured"} {
			b.Run(row+"/callers="+strconv.Itoa(callers), func(b *testing.B) {
				call := aloneCall(b, row, callers)
				b.ResetTimer()
				if callers == 1 {
					for range b.N {
						if err := call(); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := call(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// aloneCall is one GenId of BenchmarkGenIdAlone's row.
func aloneCall(b *testing.B, row string, callers int) func() error {
	pool := 1
	if callers > 1 {
		pool = defaultPoolSize
	}
	if row == "bare" {
		return startBare(b, pool)
	}
	cfg, opts := rpctest.Config{Machine: 1}, []Option{WithLogger(quiet), WithPoolSize(pool)}
	if row == "secured" {
		cfg, opts = secured(b, cfg), append(opts, WithToken(benchToken))
	}
	c, err := New([]string{rpctest.Start(b, cfg).Addr}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	return func() error { _, err := c.GenId(ctx); return err }
}
