package rpcapi

import (
	"time"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// The methods of ServiceName, as a CallObserver is told them.
const (
	MethodGenId          = "GenId"
	MethodGenIds         = "GenIds"
	MethodExpId          = "ExpId"
	MethodMakeId         = "MakeId"
	MethodTransTime      = "TransTime"
	MethodSegmentNextIds = "SegmentNextIds"
	MethodSegmentRange   = "SegmentRange"
)

// Methods lists the methods, in documentation order.
var Methods = []string{MethodGenId, MethodGenIds, MethodExpId, MethodMakeId, MethodTransTime, MethodSegmentNextIds,
	MethodSegmentRange, MethodSegmentNextNumber}

// CallObserver is told of every call a Receiver answered: its method, the
// IDs it issued (Vesta IDs for GenId and GenIds, segment IDs for
// SegmentNextIds), its error as the reply carries it (nil: success) and
// how long the receiver took. It runs on the call's goroutine, after the
// reply is made: it must be quick and safe for concurrent use.
type CallObserver interface {
	ObserveCall(method string, ids int, err *Error, elapsed time.Duration)
}

// WithObserver tells o of every call (server-rpc's metrics). nil
// observes nothing.
func WithObserver(o CallObserver) ReceiverOption {
	return func(r *Receiver) { r.obs = o }
}

// observed tells the observer of a call that began at start (monotonic),
// reading its reply once the call has returned (a deferred call).
func (r *Receiver) observed(method string, start time.Duration, reply outcome) {
	ids, err := reply.outcome()
	r.obs.ObserveCall(method, ids, err, ctxtime.Monotonic()-start)
}

// outcome is what a reply says of its call: the IDs it issued, its error.
type outcome interface{ outcome() (int, *Error) }

func (r *GenIdReply) outcome() (int, *Error) {
	if r.Err != nil {
		return 0, r.Err
	}
	return 1, nil
}
func (r *GenIdsReply) outcome() (int, *Error)    { return len(r.Ids), r.Err }
func (r *ExpIdReply) outcome() (int, *Error)     { return 0, r.Err }
func (r *MakeIdReply) outcome() (int, *Error)    { return 0, r.Err }
func (r *TransTimeReply) outcome() (int, *Error) { return 0, r.Err }
func (r *SegmentReply) outcome() (int, *Error)   { return len(r.Ids), r.Err }

// A range's IDs are counted by the tag (vesta_segment_ids_issued_total),
// not as IDs this call issued: the client serves them over time.
func (r *SegmentRangeReply) outcome() (int, *Error) { return 0, r.Err }
