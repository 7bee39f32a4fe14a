package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcapi"
)

// Client is an intf.IdService and an intf.SegmentService over one or more
// vesta-go RPC servers. It is safe for concurrent use. Close releases it.
type Client struct {
	eps    []*endpoint
	opts   options
	buf    *buffer // nil without WithBuffer
	closed atomic.Bool
	ctx    context.Context // cancelled by Close; background work runs under it
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var (
	_ intf.IdService      = (*Client)(nil)
	_ intf.SegmentService = (*Client)(nil)
)

// New returns a client of the servers at addrs (host:port), in order of
// preference. It dials lazily: servers down at New are tried at the first
// call.
func New(addrs []string, opts ...Option) (*Client, error) {
	if len(addrs) == 0 {
		return nil, invalid("no server address")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	c := &Client{opts: o}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, invalid("server address %q: %v", a, err)
		}
		c.eps = append(c.eps, newEndpoint(a, &c.opts))
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1)
	go c.healthLoop()
	if o.bufferSize > 0 {
		c.buf = newBuffer(o.bufferSize)
		c.wg.Add(1)
		go c.refillLoop()
	}
	return c, nil
}

// verdict is what one server's error means for a call.
type verdict int

const (
	answer   verdict = iota // the call's answer: return it to the caller
	skip                    // try the next server; this one stays up
	markDown                // mark this server down and try the next
)

// idVerdict judges the errors of IdService calls: a server that gave no
// answer, or that cannot issue safely right now (it is closing, fenced, or
// its clock or high-water mark is in trouble), is marked down. The
// caller's own errors (bad arguments, its context) are answers.
func idVerdict(err error) verdict {
	if isTransport(err) {
		return markDown
	}
	switch codeOf(err) {
	case rpcapi.CodeClosed, rpcapi.CodeUnavailable, rpcapi.CodeNotPersisted, rpcapi.CodeClockBehind:
		return markDown
	}
	return answer
}

// segmentVerdict judges the errors of segment calls. A server that gave no
// answer is marked down, as for any call. One whose buffers of the tag ran
// dry while its database is unreachable (ErrUnavailable), or that is
// closing, is skipped for this call only: another server may still hold
// IDs of the tag, and its Vesta IDs are not affected. An unknown tag, a
// malformed tag or count, and segment mode off are answers.
func segmentVerdict(err error) verdict {
	if isTransport(err) {
		return markDown
	}
	switch codeOf(err) {
	case rpcapi.CodeClosed, rpcapi.CodeUnavailable:
		return skip
	}
	return answer
}

// codeOf is the code of a server's error; 0 for any other error.
func codeOf(err error) rpcapi.Code {
	var we *rpcapi.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// call runs f on the first usable server, going on to the next ones as
// judge says. f must use the context it is given (it carries
// WithCallTimeout). f is a plain function, not a closure, on the hot
// paths: nothing to allocate.
func call[T any](c *Client, ctx context.Context, judge func(error) verdict, f func(context.Context, *rpcapi.Conn) (T, error)) (T, error) {
	var zero T
	if c.closed.Load() {
		return zero, intf.ErrClosed
	}
	if c.opts.callTimeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.callTimeout)
			defer cancel()
		}
	}
	tried := 0
	var skipped []error // of the servers that could not serve this call but stay up
	for _, ep := range c.eps {
		if !ep.usable(time.Now) {
			continue
		}
		tried++
		v, err := callOn(ctx, ep, f)
		if err == nil {
			if ep.down.Load() && ep.recovered() {
				c.opts.logger.Info("vesta client: server back", "addr", ep.addr)
			}
			return v, nil
		}
		verdict := judge(err)
		if verdict == answer {
			return zero, err
		}
		if c.closed.Load() {
			return zero, intf.ErrClosed
		}
		if ctx.Err() != nil {
			return zero, fmt.Errorf("vesta client: %w (last server error: %v)", ctx.Err(), err)
		}
		if verdict == markDown {
			c.markDown(ep, err)
		} else {
			skipped = append(skipped, fmt.Errorf("%s: %w", ep.addr, err))
		}
	}
	return zero, c.unavailable(tried, skipped)
}

func (c *Client) markDown(ep *endpoint, err error) {
	backoff, wasUp := ep.failed(err)
	if wasUp {
		c.opts.logger.Warn("vesta client: server down; failing over", "addr", ep.addr, "err", err, "retryIn", backoff)
	} else {
		c.opts.logger.Debug("vesta client: server still down", "addr", ep.addr, "err", err, "retryIn", backoff)
	}
}

// unavailable is the error when no server could serve a call: skipped
// holds the errors of the servers that stay up, and each down server adds
// its last error.
func (c *Client) unavailable(tried int, skipped []error) error {
	errs := skipped
	for _, ep := range c.eps {
		if err := ep.lastError(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ep.addr, err))
		}
	}
	return fmt.Errorf("vesta client: %w: none of %d server(s) could serve the call (%d tried, the others backing off): %w",
		intf.ErrUnavailable, len(c.eps), tried, errors.Join(errs...))
}

// GenId issues one ID: from the buffer when WithBuffer is on and it has
// one, else from a server.
func (c *Client) GenId(ctx context.Context) (int64, error) {
	if c.buf != nil && !c.closed.Load() {
		if id, ok := c.buf.take(); ok {
			return id, nil
		}
	}
	return call(c, ctx, idVerdict, genId)
}

func genId(ctx context.Context, cn *rpcapi.Conn) (int64, error) { return cn.GenId(ctx) }

// GenIds issues n IDs in increasing order, 1 <= n <= the server's maxBatch.
func (c *Client) GenIds(ctx context.Context, n int) ([]int64, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) ([]int64, error) { return cn.GenIds(ctx, n) })
}

// ExpId splits an ID into its fields.
func (c *Client) ExpId(ctx context.Context, id int64) (intf.Id, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) (intf.Id, error) { return cn.ExpId(ctx, id) })
}

// MakeId packs fields into an ID; omitted fields come from the server that
// answers.
func (c *Client) MakeId(ctx context.Context, req intf.MakeIdRequest) (int64, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) (int64, error) { return cn.MakeId(ctx, req) })
}

// TransTime turns the time field of an ID of type t into a time.
func (c *Client) TransTime(ctx context.Context, timeField int64, t intf.IdType) (time.Time, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) (time.Time, error) {
		return cn.TransTime(ctx, timeField, t)
	})
}

// NextIds issues n segment IDs of tag in increasing order, 1 <= n <= the
// server's maxBatch: *Client implements intf.SegmentService. A server
// whose buffers of the tag ran dry while its database is unreachable is
// skipped for the call, not marked down; an unknown tag
// (intf.ErrUnknownTag) or segment mode off on the server (ErrSegmentOff)
// is returned as is.
func (c *Client) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	return call(c, ctx, segmentVerdict, func(ctx context.Context, cn *rpcapi.Conn) ([]int64, error) {
		return cn.NextIds(ctx, tag, n)
	})
}

// ErrSegmentOff: the server runs without segment mode (segmentStore off).
var ErrSegmentOff = rpcapi.ErrSegmentOff

// Close stops the background work, drops the buffered IDs and closes every
// connection. Calls after Close return intf.ErrClosed.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.cancel()
	c.wg.Wait()
	for _, ep := range c.eps {
		ep.close()
	}
	return nil
}
