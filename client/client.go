package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Client is an intf.IdService and an intf.SegmentService over one or more
// vesta-go RPC servers. It is safe for concurrent use. Close releases it.
type Client struct {
	eps    []*endpoint
	opts   options
	buf    *buffer // nil without WithBuffer
	ranges *ranges // nil without WithSegmentRanges
	// segTags are the ranges' buffers (empty without WithSegmentRanges),
	// here rather than behind ranges so that NextSegmentId's fast path
	// loads one pointer before its add.
	segTags segbuf.Set
	closed  atomic.Bool
	ctx     context.Context // cancelled by Close; background work runs under it
	cancel  context.CancelFunc
	// deadlines are the call timeout of callers without a context that
	// can end (context.Background).
	deadlines sharedDeadlines
	wg        sync.WaitGroup
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
	c.deadlines = sharedDeadlines{parent: c.ctx}
	c.wg.Add(1)
	go c.healthLoop()
	if o.segmentRanges > 0 {
		c.ranges = newRanges(c)
	}
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
// caller's own errors (bad arguments, its context, its token, its scope,
// its quota: every server shares the auth file) are answers.
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

// call runs f on the first server that is up, going on to the next ones
// as judge says; when none could serve, it tries the servers that are
// down, as a last resort (one that came back is used at once, rather than
// the call failing). A refusal over the caller's quota is waited out and
// tried again while ctx allows. f must use the context it is given: the caller's, bounded
// by the call timeout. f is a plain function, not a closure, on the hot
// paths: nothing to allocate.
func call[T any](c *Client, ctx context.Context, judge func(error) verdict, f func(context.Context, *rpcapi.Conn) (T, error)) (T, error) {
	var zero T
	if c.closed.Load() {
		return zero, intf.ErrClosed
	}
	start := ctxtime.Monotonic() // the call's one clock reading
	if d := c.opts.callTimeout; d > 0 {
		if ctx == context.Background() || ctx == context.TODO() {
			// Nothing of the caller's to keep (no deadline, cancel or
			// value): a shared deadline, no timer per call.
			ctx = c.deadlines.get(start, d)
		} else if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > d {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
	}
	for {
		v, err := callOnce(c, ctx, start, judge, f)
		wait, ok := rateLimited(ctx, err)
		if !ok {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return v, err
		}
		start = ctxtime.Monotonic()
	}
}

// rateLimited says whether err is a server's refusal over the caller's
// quota that the call may wait out: its Retry-After ends before ctx does.
func rateLimited(ctx context.Context, err error) (time.Duration, bool) {
	if err == nil { // apart from rateLimitOf: errors.As makes its target escape
		return 0, false
	}
	rl := rateLimitOf(err)
	if rl == nil || rl.RetryAfter <= 0 {
		return 0, false
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < rl.RetryAfter {
		return 0, false
	}
	return rl.RetryAfter, true
}

// rateLimitOf is err's quota refusal, nil if none.
func rateLimitOf(err error) *intf.RateLimitError {
	var rl *intf.RateLimitError
	if errors.As(err, &rl) {
		return rl
	}
	return nil
}

// callOnce is one round of call over the servers, which began at start
// (a ctxtime.Monotonic reading).
func callOnce[T any](c *Client, ctx context.Context, start time.Duration, judge func(error) verdict, f func(context.Context, *rpcapi.Conn) (T, error)) (T, error) {
	var zero T
	var (
		errs    []error     // each server's failure in this call: their present state
		waiting []*endpoint // down: the last resort
	)
	for _, ep := range c.eps {
		if ep.down.Load() {
			waiting = append(waiting, ep)
			continue
		}
		v, err, final := attempt(c, ctx, ep, start, judge, f, true)
		if final {
			return v, err
		}
		errs = append(errs, err)
		start = ctxtime.Monotonic() // the next server's attempt begins
	}
	for _, ep := range waiting {
		v, err, final := attempt(c, ctx, ep, start, judge, f, false)
		if final {
			return v, err
		}
		errs = append(errs, err)
		start = ctxtime.Monotonic()
	}
	return zero, fmt.Errorf("vesta client: %w: none of %d server(s) could serve the call: %w",
		intf.ErrUnavailable, len(c.eps), errors.Join(errs...))
}

// attempt runs f on ep, starting at start (a ctxtime.Monotonic reading).
// final says err (or v) is the call's result; else err is ep's failure,
// for the error when no server could serve. allowed is false for a
// server tried while down: its failure does not count again.
func attempt[T any](c *Client, ctx context.Context, ep *endpoint, start time.Duration, judge func(error) verdict,
	f func(context.Context, *rpcapi.Conn) (T, error), allowed bool) (v T, err error, final bool) {
	gen := ep.gen.Load()
	v, cn, reads, err := callOn(ctx, ep, f)
	if err == nil {
		c.succeeded(ep, gen)
		return v, nil, true
	}
	if c.closed.Load() {
		return v, intf.ErrClosed, true
	}
	if ctx.Err() != nil && !isAnswer(err) {
		c.timedOut(ctx, ep, gen, allowed, start, cn, reads)
		if errors.Is(err, ctx.Err()) {
			return v, fmt.Errorf("vesta client: %s: %w", ep.addr, err), true
		}
		return v, fmt.Errorf("vesta client: %w (%s: %v)", ctx.Err(), ep.addr, err), true
	}
	switch judge(err) {
	case answer:
		return v, err, true
	case markDown:
		c.markDown(ep, err, gen, allowed, isTransport(err))
	}
	return v, fmt.Errorf("%s: %w", ep.addr, err), false
}

// isAnswer says whether err came from the server (so it is alive).
func isAnswer(err error) bool {
	var we *rpcapi.Error
	var se rpc.ServerError
	return errors.As(err, &we) || errors.As(err, &se)
}

// timedOut judges a call that ran out of time on ep, begun at start (a
// ctxtime.Monotonic reading) when cn had made reads reads. Its deadline
// is the server's fault only when the call gave the server a fair time
// (fairTime, or the call timeout when less); then a server that sent
// nothing at all on the connection during the call (a stopped process, a
// full socket, a lost network) is marked down at once, and one that sends
// but is too slow after slowLimit such timeouts in a row. A cancelled call
// says nothing about the server.
func (c *Client) timedOut(ctx context.Context, ep *endpoint, gen uint64, allowed bool, start time.Duration, cn *rpcapi.Conn, reads uint64) {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return
	}
	given := ctxtime.Monotonic() - start
	if dl, ok := ctx.Deadline(); ok && dl.Sub(ctxtime.At(start)) < given {
		// What the deadline allowed, not how late this goroutine ran: on a
		// loaded machine it may wake long after a short deadline.
		given = dl.Sub(ctxtime.At(start))
	}
	fair := fairTime
	if ct := c.opts.callTimeout; ct > 0 && ct < fair {
		fair = ct
	}
	if given < fair*9/10 { // the 10%: the call's own overhead before it reached ep
		return
	}
	given = given.Round(time.Millisecond)
	if cn == nil || !cn.HeardSince(reads) {
		c.markDown(ep, fmt.Errorf("no answer in %v: nothing came from the server", given), gen, allowed, true)
		return
	}
	if ep.slowTimeout() {
		c.markDown(ep, fmt.Errorf("%d calls in a row got no answer in time (the last in %v)", slowLimit, given), gen, allowed, false)
	}
}

// GenId issues one ID: from the buffer when WithBuffer is on and it has
// one, else from a server.
func (c *Client) GenId(ctx context.Context) (intf.Id, error) {
	if c.buf != nil && !c.closed.Load() {
		if id, ok := c.buf.take(); ok {
			return id, nil
		}
	}
	return call(c, ctx, idVerdict, genId)
}

func genId(ctx context.Context, cn *rpcapi.Conn) (intf.Id, error) { return cn.GenId(ctx) }

// GenIds issues n IDs in increasing order, 1 <= n <= the server's maxBatch.
func (c *Client) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) ([]intf.Id, error) { return cn.GenIds(ctx, n) })
}

// ExpId splits an ID into its fields.
func (c *Client) ExpId(ctx context.Context, id intf.Id) (intf.IdFields, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) (intf.IdFields, error) { return cn.ExpId(ctx, id) })
}

// MakeId packs fields into an ID; omitted fields come from the server that
// answers.
func (c *Client) MakeId(ctx context.Context, req intf.MakeIdRequest) (intf.Id, error) {
	return call(c, ctx, idVerdict, func(ctx context.Context, cn *rpcapi.Conn) (intf.Id, error) { return cn.MakeId(ctx, req) })
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
// is returned as is. With WithSegmentRanges the IDs come from the ranges
// the client holds (n up to intf.MaxBatch).
func (c *Client) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	if c.ranges != nil {
		return c.localIds(ctx, tag, n)
	}
	return call(c, ctx, segmentVerdict, func(ctx context.Context, cn *rpcapi.Conn) ([]int64, error) {
		return cn.NextIds(ctx, tag, n)
	})
}

// ErrSegmentOff: the server runs without segment mode (segmentStore off).
var ErrSegmentOff = rpcapi.ErrSegmentOff

// Close stops the background work, drops the buffered IDs and closes every
// connection. Calls after Close return intf.ErrClosed. It returns at once:
// closing the connections first ends every send and wait of the background
// work, which Close then waits for.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	if c.ranges != nil {
		c.ranges.close()
	}
	c.cancel()
	for _, ep := range c.eps {
		ep.close()
	}
	c.wg.Wait()
	if c.ranges != nil {
		c.ranges.drop()
	}
	return nil
}
