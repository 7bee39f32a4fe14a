package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/rpc"
	"sync"
	"time"

	"github.com/vesta-go/vesta/server-rpc/rpcapi"
)

// DefaultMaxConns is the connection limit when Options.MaxConns is 0.
const DefaultMaxConns = 1024

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("rpc server closed")

// Options configure a Server.
type Options struct {
	// MaxConns is the most connections served at once; more are closed at
	// once with a warning (one a second at most). 0 means DefaultMaxConns.
	MaxConns int
	// Logger receives warnings and, at debug level, connection events;
	// nil means slog.Default().
	Logger *slog.Logger
}

// Server serves one receiver as rpcapi.ServiceName.
type Server struct {
	rpc      *rpc.Server
	log      *slog.Logger
	maxConns int

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	closing  bool
	served   sync.WaitGroup // one per connection being served
	refused  uint64
	accepted uint64
	// lastRefusalLog and refusedUnlogged keep a connection flood from
	// becoming a log flood: one warning a second at most.
	lastRefusalLog  time.Time
	refusedUnlogged uint64
}

// refusalLogInterval is the least time between two "connection refused"
// warnings.
const refusalLogInterval = time.Second

// New registers recv and returns a server ready to Serve.
func New(recv *rpcapi.Receiver, opts Options) (*Server, error) {
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("rpc server: MaxConns %d < 0", opts.MaxConns)
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	rs := rpc.NewServer()
	if err := rs.RegisterName(rpcapi.ServiceName, recv); err != nil {
		return nil, fmt.Errorf("rpc server: %w", err)
	}
	return &Server{rpc: rs, log: opts.Logger, maxConns: opts.MaxConns, conns: make(map[net.Conn]struct{})}, nil
}

// Serve accepts connections on ln until Shutdown, and returns
// ErrServerClosed then; any other error stops it too. Serve closes ln.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	defer ln.Close()

	var delay time.Duration // back-off after temporary accept errors
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("vesta rpc: accept failed; retrying", "err", err, "retryIn", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		s.serve(conn)
	}
}

// serve starts serving conn, or closes it when over the limit or closing.
func (s *Server) serve(conn net.Conn) {
	s.mu.Lock()
	if s.closing || len(s.conns) >= s.maxConns {
		closing := s.closing
		s.refused++
		refused := s.refused
		logIt := !closing && time.Since(s.lastRefusalLog) >= refusalLogInterval
		unlogged := s.refusedUnlogged
		if logIt {
			s.lastRefusalLog, s.refusedUnlogged = time.Now(), 0
		} else if !closing {
			s.refusedUnlogged++
		}
		s.mu.Unlock()
		conn.Close()
		if logIt {
			s.log.Warn("vesta rpc: connection refused: too many connections", "remote", conn.RemoteAddr(),
				"maxConns", s.maxConns, "refusedTotal", refused, "refusedSinceLastWarning", unlogged)
		}
		return
	}
	s.conns[conn] = struct{}{}
	s.accepted++
	s.served.Add(1)
	s.mu.Unlock()
	s.log.Debug("vesta rpc: connection open", "remote", conn.RemoteAddr())
	go func() {
		defer s.served.Done()
		s.rpc.ServeConn(conn) // returns after answering the calls it read, and closes conn
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		s.log.Debug("vesta rpc: connection closed", "remote", conn.RemoteAddr())
	}()
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Addr is the address Serve listens on, nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Stats are the server's connection counters.
type Stats struct {
	Open, Accepted, Refused uint64
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Open: uint64(len(s.conns)), Accepted: s.accepted, Refused: s.refused}
}

// Shutdown stops accepting and stops reading calls; the calls already read
// are answered, then each connection closes. It waits for that until ctx
// is done, then closes what is left and returns ctx.Err(). It does not
// close the ID service.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		// Interrupts the blocked read: net/rpc then waits for the
		// replies of the calls it read, and closes the connection.
		_ = c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.served.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	n := len(s.conns)
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.log.Warn("vesta rpc: shutdown timed out; connections closed with calls in flight", "conns", n)
	return ctx.Err()
}
