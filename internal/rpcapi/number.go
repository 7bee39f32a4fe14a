package rpcapi

import (
	"context"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// MethodSegmentNextNumber is the method of a period tag's next number.
const MethodSegmentNextNumber = "SegmentNextNumber"

// SegmentNumberArgs asks for the next number of the period tag Tag.
type SegmentNumberArgs struct {
	Tag     string
	Timeout time.Duration
	Token   string
}

// SegmentNumberReply carries the number, or Err.
type SegmentNumberReply struct {
	Number intf.SegmentNumber
	Err    *Error
}

func (r *SegmentNumberReply) outcome() (int, *Error) {
	if r.Err != nil {
		return 0, r.Err
	}
	return 1, nil
}

// SegmentNextNumber issues the next number of the period tag args.Tag.
// The segment service must be an intf.SegmentNumberer (*segment.Generator
// is). With a guard it takes the scope segment:<tag> and one ID of the
// quota, as SegmentNextIds.
func (r *Receiver) SegmentNextNumber(args SegmentNumberArgs, reply *SegmentNumberReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodSegmentNextNumber, start, reply)
	}
	c, err := r.admitTag(args.Token, args.Tag, func() error { return nil })
	nb, ok := r.seg.(intf.SegmentNumberer)
	if err == nil && !ok {
		err = ErrSegmentOff
	}
	var grant access.Grant
	if err == nil && r.guard != nil {
		grant, err = r.take(c, 1)
	}
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Number, reply.Err = call(r, start, args.Timeout, func(ctx context.Context) (intf.SegmentNumber, error) {
		return nb.NextNumber(ctx, args.Tag)
	})
	grant.Done(issued(reply.Err, 1))
	return nil
}

// NextNumber issues the next number of the period tag tag (the server's
// SegmentNextNumber).
func (c *Conn) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	var reply SegmentNumberReply
	if err := c.call(ctx, c.m.segmentNextNumber, SegmentNumberArgs{Tag: tag, Timeout: timeout(ctx), Token: c.token}, &reply); err != nil {
		return intf.SegmentNumber{}, err
	}
	if reply.Err != nil {
		return intf.SegmentNumber{}, reply.Err
	}
	if n := reply.Number; n.Text == "" || n.Period == "" || n.Seq < 1 {
		return intf.SegmentNumber{}, &TransportError{Method: c.m.segmentNextNumber,
			Err: fmt.Errorf("%w: the number %+v in the reply", ErrProtocol, n)}
	}
	return reply.Number, nil
}
