package rpcapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"os"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// methods holds the full method names of one registered service, built
// once so that a call formats nothing.
type methods struct {
	genId, genIds, expId, makeId, transTime, segmentNextIds, segmentRange, segmentNextNumber string
}

func newMethods(service string) methods {
	return methods{
		genId:             service + ".GenId",
		genIds:            service + ".GenIds",
		expId:             service + ".ExpId",
		makeId:            service + ".MakeId",
		transTime:         service + ".TransTime",
		segmentNextIds:    service + ".SegmentNextIds",
		segmentRange:      service + ".SegmentRange",
		segmentNextNumber: service + "." + MethodSegmentNextNumber,
	}
}

// Conn is the client call code: an intf.IdService and an
// intf.SegmentService over one *rpc.Client.
// A call returns
//   - the server's error as an *Error (errors.Is/As see the intf errors);
//   - an error wrapping ctx.Err() as soon as ctx is done (the call is
//     abandoned; its reply, if it comes, is dropped);
//   - a *TransportError when the call got no answer (errors.Is
//     intf.ErrUnavailable); the *rpc.Client is then unusable.
//
// A Conn is safe for concurrent use; net/rpc multiplexes the calls.
//
// net/rpc writes a request on the caller's goroutine, under a mutex, before
// it looks at any context: on a connection whose peer stopped reading, one
// stuck write would hold every caller. A Conn made by NewNetConn therefore
// lets one caller send at a time (the others wait for their turn only
// until their context ends) and gives each send the caller's deadline as
// the connection's write deadline. A send that misses it leaves a request
// half written, so the connection is broken (Broken): it is closed, and the
// call returns an error wrapping context.DeadlineExceeded.
type Conn struct {
	c     *rpc.Client
	m     methods
	token string // sent with every call (WithToken)

	// Set by NewNetConn only; nil/zero for a Conn over a foreign
	// *rpc.Client (the plugin's), which keeps the plain behaviour.
	nc        *netConn
	send      chan struct{} // a one-place semaphore: whose turn it is to write
	broken    atomic.Bool
	abandoned atomic.Int32 // calls given up on since the last byte read
}

// maxAbandoned is how many calls a Conn lets callers give up on without a
// byte read back before it counts as broken: net/rpc keeps every abandoned
// call in its pending map until its reply comes, so a peer that reads but
// never answers (a stopped process: the kernel still takes the bytes)
// would otherwise make that map grow for as long as the socket buffers
// take requests (tens of MB). A live server answers something long before.
const maxAbandoned = 4096

var (
	_ intf.IdService       = (*Conn)(nil)
	_ intf.SegmentService  = (*Conn)(nil)
	_ intf.SegmentRanger   = (*Conn)(nil)
	_ intf.SegmentNumberer = (*Conn)(nil)
)

// ConnOption changes a Conn made by NewConn or NewNetConn.
type ConnOption func(*Conn)

// WithToken sends token with every call, for a server with an auth file.
// Check it first (access.CheckToken): the server refuses a malformed one.
func WithToken(token string) ConnOption { return func(c *Conn) { c.token = token } }

// NewConn returns the IdService of the service registered as service
// (ServiceName on TCP) behind c. Sends are not bounded by write deadlines:
// use NewNetConn for a network connection.
func NewConn(c *rpc.Client, service string, opts ...ConnOption) *Conn {
	cn := &Conn{c: c, m: newMethods(service)}
	for _, o := range opts {
		o(cn)
	}
	return cn
}

// NewNetConn returns the IdService of the service registered as service
// over the connection nc, which it owns: every send is bounded by its
// caller's deadline (see Conn), and HeardSince tells whether the peer sent
// anything lately.
func NewNetConn(nc net.Conn, service string, opts ...ConnOption) *Conn {
	_, lazy := nc.(*net.TCPConn)
	w := &netConn{Conn: nc, lazy: lazy}
	c := &Conn{c: rpc.NewClient(w), m: newMethods(service), nc: w, send: make(chan struct{}, 1)}
	w.abandoned = &c.abandoned
	for _, o := range opts {
		o(c)
	}
	return c
}

// netConn is the net.Conn under a NewNetConn: it counts the reads that bring
// bytes (Reads), and bounds each send by its caller's deadline (setSendDeadline).
type netConn struct {
	net.Conn
	reads     atomic.Uint64 // reads that brought bytes (Reads)
	abandoned *atomic.Int32

	// On plain TCP (lazy) the write deadline moves only when the one
	// armed is later than the send's (want); one armed for an earlier
	// send fires early and the write goes on (Write). Moving it is a
	// runtime timer change per call otherwise. Over TLS (whose state does
	// not survive a write timeout) it is set for every send. Guarded by
	// Conn.send, but aborted.
	lazy        bool
	want, armed time.Time   // the zero time: none
	aborted     atomic.Bool // the send was cancelled: no retry
}

func (n *netConn) Read(p []byte) (int, error) {
	k, err := n.Conn.Read(p)
	if k > 0 {
		n.reads.Add(1)
		if n.abandoned.Load() != 0 {
			n.abandoned.Store(0)
		}
	}
	return k, err
}

// setSendDeadline bounds the next send by dl (the zero time: none).
func (n *netConn) setSendDeadline(dl time.Time) {
	n.want = dl
	// After abortSend the armed deadline is in the past: set it anew.
	if n.aborted.Swap(false) || !n.lazy || n.armed.IsZero() != dl.IsZero() || dl.Before(n.armed) {
		n.arm()
	}
}

func (n *netConn) arm() {
	_ = n.SetWriteDeadline(n.want)
	n.armed = n.want
}

// abortSend ends the send under way: a cancel.
func (n *netConn) abortSend() {
	n.aborted.Store(true)
	_ = n.SetWriteDeadline(time.Unix(1, 0))
}

// Write writes p within want, going on after a deadline that fired
// early (armed for an earlier send).
func (n *netConn) Write(p []byte) (int, error) {
	written := 0
	for {
		k, err := n.Conn.Write(p[written:])
		written += k
		if err == nil || !n.lazy || n.aborted.Load() || !errors.Is(err, os.ErrDeadlineExceeded) ||
			(!n.want.IsZero() && !time.Now().Before(n.want)) {
			return written, err
		}
		n.arm()
	}
}

// Close closes the underlying *rpc.Client.
func (c *Conn) Close() error { return c.c.Close() }

// Broken says whether a send failed on this Conn (it is closed then, and
// every later call fails): drop it and dial a new one.
func (c *Conn) Broken() bool { return c.broken.Load() }

// Reads counts the reads that brought bytes from the peer: HeardSince
// tells whether any came after. A Conn made by NewConn cannot tell and
// counts none.
func (c *Conn) Reads() uint64 {
	if c.nc == nil {
		return 0
	}
	return c.nc.reads.Load()
}

// HeardSince says whether any byte came from the peer since Reads returned
// reads: a counter, not a clock, so that a reply costs no clock reading. A
// Conn made by NewConn cannot tell and says true.
func (c *Conn) HeardSince(reads uint64) bool {
	return c.nc == nil || c.nc.reads.Load() != reads
}

// breakConn closes a Conn whose stream can no longer be trusted; the calls
// pending on it end with rpc.ErrShutdown (a *TransportError).
func (c *Conn) breakConn() {
	if !c.broken.Swap(true) {
		c.c.Close()
	}
}

// timeout is what the caller has left, to send with the call (0: no
// deadline).
func timeout(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	if d := time.Until(dl); d > 0 {
		return d
	}
	return -1
}

// call runs one call, enforcing ctx.
func (c *Conn) call(ctx context.Context, method string, args, reply any) error {
	done := ctx.Done()
	if done == nil && c.nc == nil {
		return transportErr(method, c.c.Call(method, args, reply))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vesta rpc %s: %w", method, err)
	}
	var call *rpc.Call
	if c.nc == nil {
		call = c.c.Go(method, args, reply, make(chan *rpc.Call, 1))
	} else {
		var err error
		if call, err = c.sendBounded(ctx, method, args, reply); err != nil {
			return err
		}
	}
	select {
	case <-call.Done:
		return transportErr(method, call.Error)
	case <-done:
		if c.nc != nil && c.abandoned.Add(1) > maxAbandoned {
			c.breakConn()
		}
		return fmt.Errorf("vesta rpc %s: %w", method, ctx.Err())
	}
}

// sendBounded sends a call when it is this caller's turn, with the
// caller's deadline as the write deadline (see Conn).
func (c *Conn) sendBounded(ctx context.Context, method string, args, reply any) (*rpc.Call, error) {
	if c.broken.Load() {
		return nil, &TransportError{Method: method, Err: ErrBroken}
	}
	select {
	case c.send <- struct{}{}: // the usual case: nobody is sending (no select over two channels)
	default:
		select {
		case c.send <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("vesta rpc %s: waiting to send: %w", method, ctx.Err())
		}
	}
	dl, hasDeadline := ctx.Deadline()
	c.nc.setSendDeadline(dl) // the zero time: no deadline
	stop := noStop
	if !hasDeadline && ctx.Done() != nil {
		// Only a cancel can end this call: let it end the write too.
		stop = context.AfterFunc(ctx, c.nc.abortSend)
	}
	call := c.c.Go(method, args, reply, make(chan *rpc.Call, 1))
	stop()
	<-c.send
	select {
	case <-call.Done:
		var oe *net.OpError
		if call.Error != nil && errors.As(call.Error, &oe) && oe.Op == "write" {
			// The request may be half written: nothing more can go on
			// this stream.
			c.breakConn()
			if oe.Timeout() {
				cause := context.DeadlineExceeded
				if !hasDeadline {
					cause = context.Canceled
				}
				return nil, fmt.Errorf("vesta rpc %s: send stuck (the server reads nothing), connection dropped: %w", method, cause)
			}
			return nil, &TransportError{Method: method, Err: call.Error}
		}
		call.Done <- call // not a send failure: call reads it again (cap 1)
	default:
	}
	return call, nil
}

func noStop() bool { return false }

// transportErr wraps a net/rpc error. A rpc.ServerError is the server's
// answer (e.g. an unknown method): it is returned as is.
func transportErr(method string, err error) error {
	if err == nil || isServerError(err) {
		return err
	}
	return &TransportError{Method: method, Err: err}
}

// isServerError is apart from transportErr so that the success path
// allocates nothing (errors.As makes its target escape).
func isServerError(err error) bool {
	var se rpc.ServerError
	return errors.As(err, &se)
}

// GenId issues one ID.
func (c *Conn) GenId(ctx context.Context) (intf.Id, error) {
	var reply GenIdReply
	if err := c.call(ctx, c.m.genId, GenIdArgs{Timeout: timeout(ctx), Token: c.token}, &reply); err != nil {
		return 0, err
	}
	return reply.Id, errOf(reply.Err)
}

// GenIds issues n IDs in increasing order.
func (c *Conn) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	var reply GenIdsReply
	if err := c.call(ctx, c.m.genIds, GenIdsArgs{Count: n, Timeout: timeout(ctx), Token: c.token}, &reply); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	return checkCount(c.m.genIds, reply.Ids, n)
}

// checkCount refuses an answer with other than the n IDs asked for: a
// broken or foreign server, treated like one that gave no answer.
func checkCount[T intf.Id | int64](method string, ids []T, n int) ([]T, error) {
	if len(ids) != n {
		return nil, &TransportError{Method: method, Err: fmt.Errorf("%w: %d IDs in the reply, %d asked for", ErrProtocol, len(ids), n)}
	}
	return ids, nil
}

// NextIds issues n segment IDs of tag in increasing order (the server's
// SegmentNextIds).
func (c *Conn) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	var reply SegmentReply
	if err := c.call(ctx, c.m.segmentNextIds, SegmentArgs{Tag: tag, Count: n, Timeout: timeout(ctx), Token: c.token}, &reply); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	return checkCount(c.m.segmentNextIds, reply.Ids, n)
}

// NextRange allocates a range of size IDs of tag for the caller to serve
// itself (the server's SegmentRange); size 0 asks for the tag's step. A
// quota may cut the range to the caller's burst: it may be shorter than
// size, never longer.
func (c *Conn) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	var reply SegmentRangeReply
	args := SegmentRangeArgs{Tag: tag, Size: size, Timeout: timeout(ctx), Token: c.token}
	if err := c.call(ctx, c.m.segmentRange, args, &reply); err != nil {
		return intf.SegmentRange{}, err
	}
	if reply.Err != nil {
		return intf.SegmentRange{}, reply.Err
	}
	r := intf.SegmentRange{Start: reply.Start, End: reply.End}
	if r.Start < 0 || r.Size() <= 0 || (size > 0 && r.Size() > size) {
		return intf.SegmentRange{}, &TransportError{Method: c.m.segmentRange,
			Err: fmt.Errorf("%w: the range [%d, %d) in the reply, %d IDs asked for", ErrProtocol, r.Start, r.End, size)}
	}
	return r, nil
}

// ExpId splits an ID into its fields.
func (c *Conn) ExpId(ctx context.Context, id intf.Id) (intf.IdFields, error) {
	var reply ExpIdReply
	if err := c.call(ctx, c.m.expId, ExpIdArgs{Id: id, Timeout: timeout(ctx), Token: c.token}, &reply); err != nil {
		return intf.IdFields{}, err
	}
	return reply.Id, errOf(reply.Err)
}

// MakeId packs fields into an ID; omitted fields come from the server.
func (c *Conn) MakeId(ctx context.Context, req intf.MakeIdRequest) (intf.Id, error) {
	var reply MakeIdReply
	args := NewMakeIdArgs(req)
	args.Timeout, args.Token = timeout(ctx), c.token
	if err := c.call(ctx, c.m.makeId, args, &reply); err != nil {
		return 0, err
	}
	return reply.Id, errOf(reply.Err)
}

// TransTime turns the time field of an ID of type t into a time.
func (c *Conn) TransTime(ctx context.Context, timeField int64, t intf.IdType) (time.Time, error) {
	var reply TransTimeReply
	if err := c.call(ctx, c.m.transTime, TransTimeArgs{Time: timeField, Type: t, Timeout: timeout(ctx), Token: c.token}, &reply); err != nil {
		return time.Time{}, err
	}
	return reply.Time, errOf(reply.Err)
}
