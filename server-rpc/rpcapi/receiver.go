package rpcapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Receiver is the net/rpc receiver of an intf.IdService and, optionally,
// an intf.SegmentService. Each method translates one call and puts any
// error into the reply's Err (its own return value is always nil, so the
// reply always reaches the client). It does no validation or ID logic of
// its own beyond the configured batch cap, the defined MakeId fields and
// the call's deadline.
type Receiver struct {
	svc      intf.IdService
	seg      intf.SegmentService // nil: segment mode off
	maxBatch int
	// bound caps every call's time on the server; 0: only the caller's
	// Timeout, if it sent one.
	bound time.Duration
}

// ReceiverOption adds to a Receiver built by NewReceiver.
type ReceiverOption func(*Receiver)

// WithSegments serves segment IDs from seg (SegmentNextIds). Without it,
// or with a nil seg, SegmentNextIds answers ErrSegmentOff.
func WithSegments(seg intf.SegmentService) ReceiverOption {
	return func(r *Receiver) { r.seg = seg }
}

// WithCallTimeout bounds every call on the server: it runs with the
// sooner of d and the caller's own Timeout (which may be 0, none), and a
// call that reaches d fails with context.DeadlineExceeded (code 7), its
// message naming the server's bound. d <= 0 means no bound of the server's.
func WithCallTimeout(d time.Duration) ReceiverOption {
	return func(r *Receiver) { r.bound = max(d, 0) }
}

// NewReceiver returns the receiver of svc. maxBatch caps GenIds and
// SegmentNextIds (the configuration's maxBatch); outside 1..intf.MaxBatch
// it means intf.MaxBatch.
func NewReceiver(svc intf.IdService, maxBatch int, opts ...ReceiverOption) *Receiver {
	if maxBatch < 1 || maxBatch > intf.MaxBatch {
		maxBatch = intf.MaxBatch
	}
	r := &Receiver{svc: svc, maxBatch: maxBatch}
	for _, o := range opts {
		o(r)
	}
	return r
}

// checkCount applies the batch cap.
func (r *Receiver) checkCount(n int) error {
	return intf.CheckRange("count", int64(n), 1, int64(r.maxBatch))
}

func noCancel() {}

// ErrCallTimeout is in the error of a call that reached the server's bound
// (WithCallTimeout), which matches context.DeadlineExceeded too and so
// travels as code 7.
var ErrCallTimeout = errors.New("the call reached the server's callTimeout")

// callContext is the context a call runs with: the caller's remaining time,
// if it sent one, capped by the server's bound. A call whose time had
// already run out when the client sent it (a negative Timeout) or when it
// was read gets context.DeadlineExceeded and is not run: its IDs would
// only be lost.
func (r *Receiver) callContext(timeout time.Duration) (context.Context, context.CancelFunc, error) {
	if timeout < 0 {
		return nil, noCancel, errPastDeadline
	}
	if r.bound > 0 && (timeout == 0 || r.bound < timeout) {
		ctx, cancel := context.WithTimeoutCause(context.Background(), r.bound,
			fmt.Errorf("%w of %s: %w", ErrCallTimeout, r.bound, context.DeadlineExceeded))
		return ctx, cancel, nil
	}
	if timeout == 0 {
		return context.Background(), noCancel, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	if ctx.Err() != nil {
		cancel()
		return nil, noCancel, errPastDeadline
	}
	return ctx, cancel, nil
}

var errPastDeadline = fmt.Errorf("the call's deadline had passed when the server read it: %w", context.DeadlineExceeded)

// call runs f under the call's context and returns its result and wire
// error; a call already past its deadline is refused without running f. A
// call ended by the server's bound says so (the cause), not just
// "context deadline exceeded".
func call[T any](r *Receiver, timeout time.Duration, f func(context.Context) (T, error)) (T, *Error) {
	ctx, cancel, err := r.callContext(timeout)
	if err != nil {
		var zero T
		return zero, ToWire(err)
	}
	defer cancel()
	v, err := f(ctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		if cause := context.Cause(ctx); errors.Is(cause, ErrCallTimeout) {
			err = cause
		}
	}
	return v, ToWire(err)
}

// GenId issues one ID.
func (r *Receiver) GenId(args GenIdArgs, reply *GenIdReply) error {
	reply.Id, reply.Err = call(r, args.Timeout, r.svc.GenId)
	return nil
}

// GenIds issues args.Count IDs, 1 <= Count <= maxBatch.
func (r *Receiver) GenIds(args GenIdsArgs, reply *GenIdsReply) error {
	if err := r.checkCount(args.Count); err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Ids, reply.Err = call(r, args.Timeout, func(ctx context.Context) ([]int64, error) {
		return r.svc.GenIds(ctx, args.Count)
	})
	return nil
}

// ExpId splits args.Id into its fields.
func (r *Receiver) ExpId(args ExpIdArgs, reply *ExpIdReply) error {
	reply.Id, reply.Err = call(r, args.Timeout, func(ctx context.Context) (intf.Id, error) {
		return r.svc.ExpId(ctx, args.Id)
	})
	return nil
}

// MakeId packs the fields of args into an ID; a Set with unknown bits is
// refused (MakeIdArgs.Check).
func (r *Receiver) MakeId(args MakeIdArgs, reply *MakeIdReply) error {
	if err := args.Check(); err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Id, reply.Err = call(r, args.Timeout, func(ctx context.Context) (int64, error) {
		return r.svc.MakeId(ctx, args.Request())
	})
	return nil
}

// TransTime turns a time field into a time.
func (r *Receiver) TransTime(args TransTimeArgs, reply *TransTimeReply) error {
	reply.Time, reply.Err = call(r, args.Timeout, func(ctx context.Context) (time.Time, error) {
		return r.svc.TransTime(ctx, args.Time, args.Type)
	})
	return nil
}

// SegmentNextIds issues args.Count segment IDs of args.Tag, 1 <= Count <=
// maxBatch.
func (r *Receiver) SegmentNextIds(args SegmentArgs, reply *SegmentReply) error {
	if err := r.checkCount(args.Count); err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	if r.seg == nil {
		reply.Err = ToWire(ErrSegmentOff)
		return nil
	}
	reply.Ids, reply.Err = call(r, args.Timeout, func(ctx context.Context) ([]int64, error) {
		return r.seg.NextIds(ctx, args.Tag, args.Count)
	})
	return nil
}
