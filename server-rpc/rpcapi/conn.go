package rpcapi

import (
	"context"
	"errors"
	"fmt"
	"net/rpc"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// methods holds the full method names of one registered service, built
// once so that a call formats nothing.
type methods struct {
	genId, genIds, expId, makeId, transTime, segmentNextIds string
}

func newMethods(service string) methods {
	return methods{
		genId:          service + ".GenId",
		genIds:         service + ".GenIds",
		expId:          service + ".ExpId",
		makeId:         service + ".MakeId",
		transTime:      service + ".TransTime",
		segmentNextIds: service + ".SegmentNextIds",
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
type Conn struct {
	c *rpc.Client
	m methods
}

var (
	_ intf.IdService      = (*Conn)(nil)
	_ intf.SegmentService = (*Conn)(nil)
)

// NewConn returns the IdService of the service registered as service
// (ServiceName on TCP) behind c.
func NewConn(c *rpc.Client, service string) *Conn {
	return &Conn{c: c, m: newMethods(service)}
}

// Close closes the underlying *rpc.Client.
func (c *Conn) Close() error { return c.c.Close() }

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
	if done == nil {
		return transportErr(method, c.c.Call(method, args, reply))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vesta rpc %s: %w", method, err)
	}
	call := c.c.Go(method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		return transportErr(method, call.Error)
	case <-done:
		return fmt.Errorf("vesta rpc %s: %w", method, ctx.Err())
	}
}

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
func (c *Conn) GenId(ctx context.Context) (int64, error) {
	var reply GenIdReply
	if err := c.call(ctx, c.m.genId, GenIdArgs{Timeout: timeout(ctx)}, &reply); err != nil {
		return 0, err
	}
	return reply.Id, errOf(reply.Err)
}

// GenIds issues n IDs in increasing order.
func (c *Conn) GenIds(ctx context.Context, n int) ([]int64, error) {
	var reply GenIdsReply
	if err := c.call(ctx, c.m.genIds, GenIdsArgs{Count: n, Timeout: timeout(ctx)}, &reply); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	return checkCount(c.m.genIds, reply.Ids, n)
}

// checkCount refuses an answer with other than the n IDs asked for: a
// broken or foreign server, treated like one that gave no answer.
func checkCount(method string, ids []int64, n int) ([]int64, error) {
	if len(ids) != n {
		return nil, &TransportError{Method: method, Err: fmt.Errorf("%w: %d IDs in the reply, %d asked for", ErrProtocol, len(ids), n)}
	}
	return ids, nil
}

// NextIds issues n segment IDs of tag in increasing order (the server's
// SegmentNextIds).
func (c *Conn) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	var reply SegmentReply
	if err := c.call(ctx, c.m.segmentNextIds, SegmentArgs{Tag: tag, Count: n, Timeout: timeout(ctx)}, &reply); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	return checkCount(c.m.segmentNextIds, reply.Ids, n)
}

// ExpId splits an ID into its fields.
func (c *Conn) ExpId(ctx context.Context, id int64) (intf.Id, error) {
	var reply ExpIdReply
	if err := c.call(ctx, c.m.expId, ExpIdArgs{Id: id, Timeout: timeout(ctx)}, &reply); err != nil {
		return intf.Id{}, err
	}
	return reply.Id, errOf(reply.Err)
}

// MakeId packs fields into an ID; omitted fields come from the server.
func (c *Conn) MakeId(ctx context.Context, req intf.MakeIdRequest) (int64, error) {
	var reply MakeIdReply
	args := NewMakeIdArgs(req)
	args.Timeout = timeout(ctx)
	if err := c.call(ctx, c.m.makeId, args, &reply); err != nil {
		return 0, err
	}
	return reply.Id, errOf(reply.Err)
}

// TransTime turns the time field of an ID of type t into a time.
func (c *Conn) TransTime(ctx context.Context, timeField int64, t intf.IdType) (time.Time, error) {
	var reply TransTimeReply
	if err := c.call(ctx, c.m.transTime, TransTimeArgs{Time: timeField, Type: t, Timeout: timeout(ctx)}, &reply); err != nil {
		return time.Time{}, err
	}
	return reply.Time, errOf(reply.Err)
}
