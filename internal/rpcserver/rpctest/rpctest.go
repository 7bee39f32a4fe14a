// Package rpctest starts vesta-go RPC servers for tests, in the style of
// net/http/httptest: a real ID service with a temporary data dir behind a
// real TCP server on 127.0.0.1, stopped by the test's cleanup.
package rpctest

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// Config describes a test server. The zero value is a machine-0 server on
// a free port with a fresh data dir.
type Config struct {
	Machine int64
	// Addr to listen on; "" means 127.0.0.1:0. Reuse a stopped server's
	// Addr to restart it on the same port.
	Addr string
	// DataDir; "" means a new t.TempDir(). Reuse a stopped server's
	// DataDir to restart the same machine id without repeating IDs.
	DataDir  string
	MaxBatch int // 0: the config default, 10000
	MaxConns int
	Type     intf.IdType
	// Populator names the service's strategy; "" is the default (lock).
	Populator string
	// Segments serves SegmentNextIds; nil: segment mode off. The caller
	// owns it (Stop does not close it).
	Segments intf.SegmentService
	Logger   *slog.Logger // nil: discard
	// Guard checks every call's token, scope and quota; nil: none.
	Guard *access.Guard
	// Receiver are more options of the receiver (e.g. its observer, its
	// call timeout), applied after Segments and Guard.
	Receiver []rpcapi.ReceiverOption
	// Options are the server's limits and timeouts; MaxConns and Logger
	// above replace theirs.
	Options rpcserver.Options
}

// Server is a running test server.
type Server struct {
	Addr    string
	DataDir string
	Svc     *service.Service
	RPC     *rpcserver.Server

	served   chan error
	stopOnce sync.Once
	stopErr  error
}

// Start starts a server and registers its Stop with tb.Cleanup.
func Start(tb testing.TB, c Config) *Server {
	tb.Helper()
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.DataDir == "" {
		c.DataDir = tb.TempDir()
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 10_000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	svc, err := service.New(context.Background(), service.Settings{
		Machine: c.Machine, GenMethod: intf.GenMethodCentral, Type: c.Type, Populator: c.Populator,
		DataDir: c.DataDir, Logger: c.Logger,
	})
	if err != nil {
		tb.Fatalf("rpctest: service: %v", err)
	}
	ln, err := listen(c.Addr)
	if err != nil {
		svc.Close()
		tb.Fatalf("rpctest: listen %s: %v", c.Addr, err)
	}
	opts := c.Options
	if c.MaxConns != 0 {
		opts.MaxConns = c.MaxConns
	}
	opts.Logger = c.Logger
	recvOpts := append([]rpcapi.ReceiverOption{rpcapi.WithSegments(c.Segments), rpcapi.WithGuard(c.Guard)}, c.Receiver...)
	srv, err := rpcserver.New(rpcapi.NewReceiver(svc, c.MaxBatch, recvOpts...), opts)
	if err != nil {
		svc.Close()
		tb.Fatalf("rpctest: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), DataDir: c.DataDir, Svc: svc, RPC: srv, served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("rpctest: stop: %v", err)
		}
	})
	return s
}

// listen retries briefly: a port just released by a stopped server can be
// busy for a moment.
func listen(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// Stop shuts the server down gracefully and closes its service. Calls
// after the first return the first result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := s.RPC.Shutdown(ctx)
		if serr := <-s.served; !errors.Is(serr, rpcserver.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		s.stopErr = errors.Join(err, s.Svc.Close())
	})
	return s.stopErr
}

// BuildServerRPC returns the server-rpc command built for tests. The
// packages of one go test run share one build (see internal/testbin).
func BuildServerRPC(tb testing.TB) string {
	tb.Helper()
	return testbin.Must(tb, "github.com/vesta-go/vesta/server-rpc")
}
