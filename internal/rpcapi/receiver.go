package rpcapi

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// Receiver is the net/rpc receiver of an intf.IdService and, optionally,
// an intf.SegmentService. Each method translates one call and puts any
// error into the reply's Err (its own return value is always nil, so the
// reply always reaches the client). It does no validation or ID logic of
// its own beyond the configured batch and range caps, the defined MakeId
// fields, the call's deadline and, with a guard (WithGuard), the caller's
// token, scope and quota.
type Receiver struct {
	svc      intf.IdService
	seg      intf.SegmentService // nil: segment mode off
	maxBatch int
	maxRange int64 // the largest SegmentRange size; 0: serverdefaults.SegmentMaxRange
	// bound caps every call's time on the server; 0: only the caller's
	// Timeout, if it sent one.
	bound time.Duration
	// boundCause is the cause of a call that reached bound.
	boundCause error
	// guard checks every call's token, scope and quota; nil: none.
	guard *access.Guard
	// peer is the caller's address (ForPeer), for the quota per address
	// and the log; "" on a receiver shared by every connection.
	peer string
	// authed is set once a call of this peer's connection authenticated
	// (ForPeer; nil on a shared receiver).
	authed *atomic.Bool
	// tokens skips hashing the token this peer's connection presented
	// before (ForPeer; nil on a shared receiver).
	tokens *access.TokenCache
	// obs is told of every call (WithObserver); nil: none.
	obs CallObserver
}

// ReceiverOption adds to a Receiver built by NewReceiver.
type ReceiverOption func(*Receiver)

// WithSegments serves segment IDs from seg (SegmentNextIds). Without it,
// or with a nil seg, SegmentNextIds answers ErrSegmentOff.
func WithSegments(seg intf.SegmentService) ReceiverOption {
	return func(r *Receiver) { r.seg = seg }
}

// WithMaxRange caps the size of SegmentRange (the configuration's
// segmentMaxRange); n < 1 means serverdefaults.SegmentMaxRange.
func WithMaxRange(n int64) ReceiverOption {
	return func(r *Receiver) { r.maxRange = n }
}

// WithCallTimeout bounds every call on the server: it runs with the
// sooner of d and the caller's own Timeout (which may be 0, none), and a
// call that reaches d fails with context.DeadlineExceeded (code 7), its
// message naming the server's bound. d <= 0 means no bound of the server's.
func WithCallTimeout(d time.Duration) ReceiverOption {
	return func(r *Receiver) {
		r.bound = max(d, 0)
		r.boundCause = fmt.Errorf("%w of %s: %w", ErrCallTimeout, r.bound, context.DeadlineExceeded)
	}
}

// WithGuard checks every call with g: its Token must be a client's
// (intf.ErrUnauthenticated), with the call's scope — genid for GenId and
// GenIds, decode for ExpId, MakeId and TransTime, segment:<tag> for
// SegmentNextIds (intf.ErrPermissionDenied) — and the IDs it asks for
// within the client's quota (intf.ErrRateLimited). A nil g checks nothing.
// The quota per remote address needs the receiver of each connection
// (ForPeer), which rpcserver makes.
func WithGuard(g *access.Guard) ReceiverOption {
	return func(r *Receiver) { r.guard = g }
}

// Guarded says whether the receiver checks calls (WithGuard): then a
// server serves each connection with its own ForPeer receiver.
func (r *Receiver) Guarded() bool { return r.guard != nil }

// ForPeer returns a copy of r for the connection from remote (host:port):
// its calls are counted against remote's quota and logged with it.
func (r *Receiver) ForPeer(remote string) *Receiver {
	c := *r
	c.peer, c.authed, c.tokens = remote, new(atomic.Bool), new(access.TokenCache)
	return &c
}

// Authenticated says whether a call on this peer's receiver (ForPeer) has
// presented a valid token, or no guard checks tokens: a connection that
// has not may be given less (rpcserver: one call at a time).
func (r *Receiver) Authenticated() bool {
	return r.guard == nil || (r.authed != nil && r.authed.Load())
}

// authenticate checks token with the guard, noting a success for the
// connection.
func (r *Receiver) authenticate(token string) (access.Caller, error) {
	var c access.Caller
	var err error
	if r.tokens != nil {
		c, err = r.guard.AuthenticateCached(r.tokens, token, r.peer)
	} else {
		c, err = r.guard.Authenticate(token, r.peer)
	}
	if err == nil && r.authed != nil {
		r.authed.Store(true)
	}
	return c, err
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

// ErrCallTimeout is in the error of a call that reached the server's bound
// (WithCallTimeout), which matches context.DeadlineExceeded too and so
// travels as code 7.
var ErrCallTimeout = errors.New("the call reached the server's callTimeout")

// callContext is the context a call that began at start (a
// ctxtime.Monotonic reading) runs with: the caller's remaining time, if it
// sent one, capped by the server's bound; nil when neither is set
// (context.Background). Its timer is made only if the call waits
// (ctxtime.Deadline). A call whose time had already run out when the
// client sent it (a negative Timeout) gets context.DeadlineExceeded and is
// not run: its IDs would only be lost.
func (r *Receiver) callContext(start, timeout time.Duration) (*ctxtime.Deadline, error) {
	if timeout < 0 {
		return nil, errPastDeadline
	}
	if r.bound > 0 && (timeout == 0 || r.bound < timeout) {
		return ctxtime.WithTimeoutCauseFrom(context.Background(), start, r.bound, r.boundCause), nil
	}
	if timeout == 0 {
		return nil, nil
	}
	// A positive timeout has not run out at start: the service's own
	// check of ctx refuses a call whose time runs out while it is read.
	return ctxtime.WithTimeoutCauseFrom(context.Background(), start, timeout, nil), nil
}

// clock is the start of a call that sent timeout: one ctxtime.Monotonic
// reading, which times the call for the observer and starts its deadline;
// 0 (no reading) when neither needs it.
func (r *Receiver) clock(timeout time.Duration) time.Duration {
	if r.obs == nil && r.bound <= 0 && timeout <= 0 {
		return 0
	}
	return ctxtime.Monotonic()
}

var errPastDeadline = fmt.Errorf("the call's deadline had passed when the server read it: %w", context.DeadlineExceeded)

// call runs f under the call's context and returns its result and wire
// error; a call already past its deadline is refused without running f. A
// call ended by the server's bound says so (the cause), not just
// "context deadline exceeded".
func call[T any](r *Receiver, start, timeout time.Duration, f func(context.Context) (T, error)) (T, *Error) {
	d, err := r.callContext(start, timeout)
	if err != nil {
		var zero T
		return zero, ToWire(err)
	}
	var ctx context.Context = context.Background()
	if d != nil {
		defer d.Stop()
		ctx = d
	}
	v, err := f(ctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		if cause := context.Cause(ctx); errors.Is(cause, ErrCallTimeout) {
			err = cause
		}
	}
	return v, ToWire(err)
}

// allow authenticates token and checks scope; nil without a guard.
func (r *Receiver) allow(token string, scope access.Scope) (access.Caller, error) {
	if r.guard == nil {
		return access.Caller{}, nil
	}
	c, err := r.authenticate(token)
	if err != nil {
		return c, err
	}
	return c, r.guard.Authorize(c, scope, r.peer)
}

// take takes n IDs from the caller's quota; a zero Grant without a guard.
func (r *Receiver) take(c access.Caller, n int) (access.Grant, error) {
	if r.guard == nil {
		return access.Grant{}, nil
	}
	// A caller back before the Retry-After it was given is held until
	// then (at most access.DefaultMaxHold): its answer would be dropped by
	// no well-behaved client.
	return r.guard.TakeWait(context.Background(), c, r.peer, n)
}

// GenId issues one ID.
func (r *Receiver) GenId(args GenIdArgs, reply *GenIdReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodGenId, start, reply)
	}
	if r.guard == nil { // the hot path without an auth file
		reply.Id, reply.Err = call(r, start, args.Timeout, r.svc.GenId)
		return nil
	}
	c, err := r.allow(args.Token, access.ScopeGenId)
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	grant, err := r.take(c, 1)
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Id, reply.Err = call(r, start, args.Timeout, r.svc.GenId)
	grant.Done(issued(reply.Err, 1))
	return nil
}

// issued is how many IDs a call that asked for n issued.
func issued(err *Error, n int) int {
	if err != nil {
		return 0
	}
	return n
}

// GenIds issues args.Count IDs, 1 <= Count <= maxBatch.
func (r *Receiver) GenIds(args GenIdsArgs, reply *GenIdsReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodGenIds, start, reply)
	}
	c, err := r.allow(args.Token, access.ScopeGenId)
	if err == nil {
		err = r.checkCount(args.Count)
	}
	var grant access.Grant
	if err == nil {
		grant, err = r.take(c, args.Count)
	}
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Ids, reply.Err = call(r, start, args.Timeout, func(ctx context.Context) ([]intf.Id, error) {
		return r.svc.GenIds(ctx, args.Count)
	})
	grant.Done(issued(reply.Err, args.Count))
	return nil
}

// ExpId splits args.Id into its fields.
func (r *Receiver) ExpId(args ExpIdArgs, reply *ExpIdReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodExpId, start, reply)
	}
	if _, err := r.allow(args.Token, access.ScopeDecode); err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Id, reply.Err = call(r, start, args.Timeout, func(ctx context.Context) (intf.IdFields, error) {
		return r.svc.ExpId(ctx, args.Id)
	})
	return nil
}

// MakeId packs the fields of args into an ID; a Set with unknown bits is
// refused (MakeIdArgs.Check).
func (r *Receiver) MakeId(args MakeIdArgs, reply *MakeIdReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodMakeId, start, reply)
	}
	_, err := r.allow(args.Token, access.ScopeDecode)
	if err == nil {
		err = args.Check()
	}
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Id, reply.Err = call(r, start, args.Timeout, func(ctx context.Context) (intf.Id, error) {
		return r.svc.MakeId(ctx, args.Request())
	})
	return nil
}

// TransTime turns a time field into a time.
func (r *Receiver) TransTime(args TransTimeArgs, reply *TransTimeReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodTransTime, start, reply)
	}
	if _, err := r.allow(args.Token, access.ScopeDecode); err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Time, reply.Err = call(r, start, args.Timeout, func(ctx context.Context) (time.Time, error) {
		return r.svc.TransTime(ctx, args.Time, args.Type)
	})
	return nil
}

// SegmentNextIds issues args.Count segment IDs of args.Tag, 1 <= Count <=
// maxBatch.
func (r *Receiver) SegmentNextIds(args SegmentArgs, reply *SegmentReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodSegmentNextIds, start, reply)
	}
	grant, err := r.admitSegment(args)
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	reply.Ids, reply.Err = call(r, start, args.Timeout, func(ctx context.Context) ([]int64, error) {
		return r.seg.NextIds(ctx, args.Tag, args.Count)
	})
	grant.Done(issued(reply.Err, args.Count))
	return nil
}

// SegmentRange hands out the range of args.Size IDs of args.Tag (the tag's
// step when Size is 0), 0 <= Size <= the server's segmentMaxRange, for the
// client to serve itself. The segment service must be an
// intf.SegmentRanger (*segment.Generator is). With a guard it takes the
// scope segment:<tag>, and its IDs count against the quota: a range is cut
// to the caller's burst (access.Guard.TakeRange).
func (r *Receiver) SegmentRange(args SegmentRangeArgs, reply *SegmentRangeReply) error {
	start := r.clock(args.Timeout)
	if r.obs != nil {
		defer r.observed(MethodSegmentRange, start, reply)
	}
	grant, rg, err := r.admitRange(args)
	if err != nil {
		reply.Err = ToWire(err)
		return nil
	}
	rng, werr := call(r, start, args.Timeout, func(ctx context.Context) (intf.SegmentRange, error) {
		return rg.NextRange(ctx, args.Tag, grant.Size)
	})
	var failed error // not werr itself: a nil *Error is a non-nil error
	if werr != nil {
		failed = werr
	}
	rng = grant.Settle(rng, failed)
	reply.Start, reply.End, reply.Err = rng.Start, rng.End, werr
	return nil
}

// admitRange checks a SegmentRange call as admitSegment does a batch, then
// charges the range's IDs to the quota before the store is asked
// (access.Guard.TakeRange: counted, cut to the burst).
func (r *Receiver) admitRange(args SegmentRangeArgs) (access.RangeGrant, intf.SegmentRanger, error) {
	grant := access.RangeGrant{Size: args.Size}
	c, err := r.admitTag(args.Token, args.Tag, func() error { return r.checkRangeSize(args.Size) })
	rg, ok := r.seg.(intf.SegmentRanger)
	if err == nil && !ok {
		err = ErrSegmentOff
	}
	if err == nil && r.guard != nil {
		grant, err = r.guard.TakeRange(context.Background(), c, r.peer, rg, args.Tag, args.Size)
	}
	return grant, rg, err
}

// checkRangeSize bounds a SegmentRange size: 0 (the tag's step) up to
// maxRange.
func (r *Receiver) checkRangeSize(size int64) error {
	limit := r.maxRange
	if limit < 1 {
		limit = serverdefaults.SegmentMaxRange
	}
	return intf.CheckRange("size", size, 0, limit)
}

// admitSegment checks a SegmentNextIds call (admitTag) and takes its IDs
// from the quota.
func (r *Receiver) admitSegment(args SegmentArgs) (access.Grant, error) {
	c, err := r.admitTag(args.Token, args.Tag, func() error { return r.checkCount(args.Count) })
	if err != nil || r.guard == nil {
		return access.Grant{}, err
	}
	return r.take(c, args.Count)
}

// admitTag checks a segment call: who calls, its size (check), segment
// mode, the tag (before it is named in a scope), the scope.
func (r *Receiver) admitTag(token, tag string, check func() error) (access.Caller, error) {
	var c access.Caller
	if r.guard != nil {
		var err error
		if c, err = r.authenticate(token); err != nil {
			return c, err
		}
	}
	if err := check(); err != nil {
		return c, err
	}
	if r.seg == nil {
		return c, ErrSegmentOff
	}
	if r.guard == nil {
		return c, nil
	}
	if err := intf.CheckTag(tag); err != nil {
		return c, err
	}
	return c, r.guard.Authorize(c, access.SegmentScope(tag), r.peer)
}
