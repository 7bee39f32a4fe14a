package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcapi"
)

// endpoint is one server address: a pool of connections and its health.
type endpoint struct {
	addr   string
	opts   *options
	slots  []slot
	next   atomic.Uint32
	closed atomic.Bool // set by close: no more dialling

	down atomic.Bool // fast path: false while healthy
	mu   sync.Mutex  // guards the fields below
	// failures counts the failures in a row; retryAt is when a down
	// endpoint may be tried again; lastErr is the latest failure.
	failures int
	retryAt  time.Time
	lastErr  error
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
	d := net.Dialer{Timeout: e.opts.dialTimeout}
	nc, err := d.DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return nil, &rpcapi.TransportError{Method: "dial", Err: err}
	}
	return rpcapi.NewConn(rpc.NewClient(nc), rpcapi.ServiceName), nil
}

// drop removes c from s (if still there) and closes it.
func (s *slot) drop(c *rpcapi.Conn) {
	if s.conn.CompareAndSwap(c, nil) {
		c.Close()
	}
}

// callOn runs f on a pooled connection of e. A connection that broke
// since its last use is dropped and the call is tried once more on a new
// one, so a restarted server is picked up at once.
func callOn[T any](ctx context.Context, e *endpoint, f func(context.Context, *rpcapi.Conn) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		c, s, fresh, err := e.conn(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		v, err := f(ctx, c)
		if err == nil || !isTransport(err) {
			return v, err
		}
		s.drop(c)
		if fresh || attempt >= len(e.slots) {
			return v, err
		}
	}
}

// isTransport says whether err means the call got no answer.
func isTransport(err error) bool {
	var te *rpcapi.TransportError
	return errors.As(err, &te)
}

// usable says whether calls may try e now: it is up, or its back-off has
// passed.
func (e *endpoint) usable(now func() time.Time) bool {
	if !e.down.Load() {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return !now().Before(e.retryAt)
}

// failed marks e down for a back-off that doubles with each failure in a
// row (with ±20% jitter so that clients do not retry in step). It returns
// the back-off and whether e was up before.
func (e *endpoint) failed(err error) (backoff time.Duration, wasUp bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	wasUp = !e.down.Load()
	e.failures++
	backoff = e.opts.backoffMin << min(e.failures-1, 30)
	if backoff > e.opts.backoffMax || backoff <= 0 {
		backoff = e.opts.backoffMax
	}
	backoff = time.Duration(float64(backoff) * (0.8 + 0.4*rand.Float64()))
	e.retryAt = time.Now().Add(backoff)
	e.lastErr = err
	e.down.Store(true)
	return backoff, wasUp
}

// recovered marks e up; it returns whether e was down before.
func (e *endpoint) recovered() bool {
	if !e.down.Load() {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	wasDown := e.down.Swap(false)
	e.failures, e.lastErr = 0, nil
	return wasDown
}

// lastError is the latest failure, for the error when all are down.
func (e *endpoint) lastError() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lastErr
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
