package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
)

// endpoint is one server address: a pool of connections and its health
// (health.go).
type endpoint struct {
	addr   string
	opts   *options
	slots  []slot
	next   atomic.Uint32
	closed atomic.Bool // set by close: no more dialling

	down    atomic.Bool // fast path: false while healthy
	gen     atomic.Uint64
	probing atomic.Bool // a background probe is running
	mu      sync.Mutex  // guards the fields below
	// failures counts the failures in a row (an outage once, see
	// failed); retryAt is when a down endpoint is due for a probe;
	// lastErr is the latest failure, at lastErrAt; downSince is when it
	// went down.
	failures  int
	retryAt   time.Time
	lastErr   error
	lastErrAt time.Time
	downSince time.Time
	// slow counts fair timeouts in a row of a server that still sends
	// something (see timedOut); atomic, off the lock for the hot path.
	slow atomic.Int32
}

// slot holds one pooled connection. dialing (a one-place semaphore, not a
// mutex, so that a waiting caller keeps its deadline) lets one caller at a
// time dial it.
type slot struct {
	dialing chan struct{}
	conn    atomic.Pointer[rpcapi.Conn]
}

func newEndpoint(addr string, o *options) *endpoint {
	e := &endpoint{addr: addr, opts: o, slots: make([]slot, o.poolSize)}
	for i := range e.slots {
		e.slots[i].dialing = make(chan struct{}, 1)
	}
	return e
}

// conn returns a pooled connection, dialling it when the slot is empty;
// fresh says it was just dialled. After close it returns intf.ErrClosed.
func (e *endpoint) conn(ctx context.Context) (c *rpcapi.Conn, s *slot, fresh bool, err error) {
	s = &e.slots[int(e.next.Add(1)-1)%len(e.slots)]
	if c = s.conn.Load(); c != nil {
		return c, s, false, nil
	}
	select {
	case s.dialing <- struct{}{}:
		defer func() { <-s.dialing }()
	case <-ctx.Done():
		return nil, s, false, fmt.Errorf("vesta client: waiting to dial %s: %w", e.addr, ctx.Err())
	}
	if c = s.conn.Load(); c != nil {
		return c, s, false, nil
	}
	if e.closed.Load() {
		return nil, s, false, intf.ErrClosed
	}
	if c, err = e.dial(ctx); err != nil {
		return nil, s, false, err
	}
	s.conn.Store(c)
	// close may have emptied the slots while this dial ran: either it saw
	// c, or c is seen closed here (both atomics are sequentially
	// consistent); drop only closes c once.
	if e.closed.Load() {
		s.drop(c)
		return nil, s, false, intf.ErrClosed
	}
	return c, s, true, nil
}

func (e *endpoint) dial(ctx context.Context) (*rpcapi.Conn, error) {
	nc, err := e.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("vesta client: dial %s: %w", e.addr, ctx.Err())
		}
		return nil, &rpcapi.TransportError{Method: "dial", Err: err}
	}
	// NewNetConn bounds every send by its caller's deadline.
	return rpcapi.NewNetConn(nc, rpcapi.ServiceName, rpcapi.WithToken(e.opts.token)), nil
}

// connect opens a connection to e.addr, TCP or the WithDialer's, and
// makes the TLS handshake when configured: the handshake is part of the
// dial, so a server whose certificate does not verify fails here.
func (e *endpoint) connect(ctx context.Context) (net.Conn, error) {
	if e.opts.dialer == nil {
		d := net.Dialer{Timeout: e.opts.dialTimeout}
		if e.opts.tls != nil {
			td := tls.Dialer{NetDialer: &d, Config: e.opts.tls}
			return td.DialContext(ctx, "tcp", e.addr)
		}
		return d.DialContext(ctx, "tcp", e.addr)
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.dialTimeout)
	defer cancel()
	nc, err := e.opts.dialer(ctx, e.addr)
	switch {
	case err != nil:
		return nil, err
	case nc == nil:
		return nil, errors.New("the dialer returned no connection")
	case e.opts.tls == nil:
		return nc, nil
	}
	cfg := e.opts.tls
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = e.addr
		if host, _, err := net.SplitHostPort(e.addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// drop removes c from s (if still there) and closes it.
func (s *slot) drop(c *rpcapi.Conn) {
	if s.conn.CompareAndSwap(c, nil) {
		c.Close()
	}
}

// dropAll closes every pooled connection (they are suspect: the server
// gave no answer); calls still running on them end with a transport
// error, and the next calls dial afresh.
func (e *endpoint) dropAll() {
	for i := range e.slots {
		if c := e.slots[i].conn.Load(); c != nil {
			e.slots[i].drop(c)
		}
	}
}

// callOn runs f on a pooled connection of e and returns the connection it
// last used (nil: none, e.g. the dial failed) with its Reads before the
// call. A connection that broke
// since its last use is dropped and the call is tried again on the next
// one, so that a restarted server is picked up at once: at most pool-size
// times, never after a freshly dialled connection failed, and not once e
// has been marked down meanwhile (the call had better go on to the next
// server).
func callOn[T any](ctx context.Context, e *endpoint, f func(context.Context, *rpcapi.Conn) (T, error)) (T, *rpcapi.Conn, uint64, error) {
	for attempt := 0; ; attempt++ {
		c, s, fresh, err := e.conn(ctx)
		if err != nil {
			var zero T
			return zero, nil, 0, err
		}
		reads := c.Reads()
		v, err := f(ctx, c)
		if err == nil {
			return v, c, reads, nil
		}
		transport := isTransport(err)
		if transport || c.Broken() {
			s.drop(c)
		}
		if !transport || fresh || attempt >= len(e.slots) || e.down.Load() || ctx.Err() != nil {
			return v, c, reads, err
		}
	}
}

// isTransport says whether err means the call got no answer.
func isTransport(err error) bool {
	var te *rpcapi.TransportError
	return errors.As(err, &te)
}

// close closes every pooled connection; calls still running on them end
// with a transport error and find the endpoint closed when they retry.
func (e *endpoint) close() {
	e.closed.Store(true)
	for i := range e.slots {
		if c := e.slots[i].conn.Swap(nil); c != nil {
			c.Close()
		}
	}
}
