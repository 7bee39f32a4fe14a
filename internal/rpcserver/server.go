package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("rpc server closed")

// Server serves one receiver as rpcapi.ServiceName.
type Server struct {
	rpc  *rpc.Server
	recv *rpcapi.Receiver
	log  *slog.Logger
	opts Options
	ctr  counters

	tls atomic.Pointer[tlsserve.Listener] // set by Serve with Options.TLS

	mu      sync.Mutex
	ln      net.Listener
	conns   map[*conn]struct{}
	live    int                // conns counted against MaxConns (not yet evicted)
	perIP   map[netip.Addr]int // counted conns per remote IP
	closing bool
	served  sync.WaitGroup // one per connection being served
	// One warning a second at most per kind, so that a flood does not
	// become a log flood.
	refusalLog, droppedLog, typesLog rateLimit
}

// warnInterval is the least time between two warnings of one kind.
const warnInterval = time.Second

// New registers recv and returns a server ready to Serve.
func New(recv *rpcapi.Receiver, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	rs := rpc.NewServer()
	if err := rs.RegisterName(rpcapi.ServiceName, recv); err != nil {
		return nil, fmt.Errorf("rpc server: %w", err)
	}
	return &Server{rpc: rs, recv: recv, log: opts.Logger, opts: opts,
		conns: make(map[*conn]struct{}), perIP: make(map[netip.Addr]int)}, nil
}

// Serve accepts connections on ln until Shutdown, and returns
// ErrServerClosed then; any other error stops it too. Serve closes ln.
// With Options.TLS, each connection is admitted (the limits above) before
// its TLS handshake, which its first read does within FirstByteTimeout.
func (s *Server) Serve(ln net.Listener) error {
	if s.opts.TLS != nil {
		tl := tlsserve.NewListener(ln, s.opts.TLS.ServerConfig(), tlsserve.Options{Logger: s.log})
		s.tls.Store(tl)
		ln = tl
	}
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
		nc, err := ln.Accept()
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
		s.serve(newConn(nc))
	}
}

// serve starts serving c, or closes it when it is refused.
func (s *Server) serve(c *conn) {
	c.idleSince.Store(idleMark(ctxtime.Monotonic())) // waiting for its first call
	if !s.admit(c) {
		c.Close()
		return
	}
	s.log.Debug("vesta rpc: connection open", "remote", c.RemoteAddr())
	go func() {
		defer s.served.Done()
		r := newFrameReader(c, &s.opts, &s.ctr)
		// serveCalls returns after answering the calls it read, and closes c.
		rs, authed := s.rpcFor(c)
		serveCalls(rs, newServerCodec(c, r, &s.opts, authed, &s.ctr))
		s.mu.Lock()
		s.releaseLocked(c)
		delete(s.conns, c)
		s.mu.Unlock()
		s.warnClosed(c, r.err)
		s.log.Debug("vesta rpc: connection closed", "remote", c.RemoteAddr(), "reason", r.err,
			"typeDefs", r.typeDefs, "typeDefBytes", r.typeDefBytes)
	}()
}

// warnClosed warns that c was closed for a message over the limits (err,
// why its reads stopped), one warning a second at most per kind.
func (s *Server) warnClosed(c *conn, err error) {
	var big *MessageTooBigError
	var defs *TypeDefsError
	switch {
	case errors.As(err, &big):
		if ok, unlogged := s.rateLimited(&s.droppedLog); ok {
			s.log.Warn("vesta rpc: connection closed: message too big", "remote", c.RemoteAddr(),
				"size", big.Size, "maxMessageBytes", big.Max, "tooBigTotal", s.ctr.tooBig.Load(),
				"tooBigSinceLastWarning", unlogged)
		}
	case errors.As(err, &defs), errors.Is(err, ErrInterfaceType), errors.Is(err, errBadTypeDef):
		if ok, unlogged := s.rateLimited(&s.typesLog); ok {
			s.log.Warn("vesta rpc: connection closed: gob types refused", "remote", c.RemoteAddr(),
				"reason", err, "maxTypeDefs", s.opts.MaxTypeDefs, "maxTypeDefBytes", s.opts.MaxTypeDefBytes,
				"badTypesTotal", s.ctr.badTypes.Load(), "badTypesSinceLastWarning", unlogged)
		}
	}
}

// rateLimited says whether to warn now under l, and how many warnings
// were not written since the last.
func (s *Server) rateLimited(l *rateLimit) (bool, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return l.logIt(time.Now(), warnInterval)
}

// rpcFor is the net/rpc server of c: the shared one, or — for a guarded
// receiver, whose quotas and logs need the caller's address — one
// serving the receiver of c's peer (registering it costs a few
// microseconds per connection, not per call).
func (s *Server) rpcFor(c *conn) (*rpc.Server, func() bool) {
	if !s.recv.Guarded() {
		return s.rpc, s.recv.Authenticated
	}
	rs, peer := rpc.NewServer(), s.recv.ForPeer(c.RemoteAddr().String())
	if err := rs.RegisterName(rpcapi.ServiceName, peer); err != nil {
		s.log.Error("vesta rpc: registering the receiver", "err", err) // cannot happen: New registered its type
		return s.rpc, peer.Authenticated
	}
	return rs, peer.Authenticated
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
		c.stop()
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
