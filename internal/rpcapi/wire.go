package rpcapi

import (
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// ServiceName is the name the TCP server registers the Receiver under.
const ServiceName = "IdService"

// Every Args type carries Timeout: the time the caller had left when it
// sent the call (0: no deadline). The server runs the call with that
// timeout. A relative time is used so that clock skew between the hosts
// does not matter.
//
// Every Args type carries Token too: the caller's bearer token, which a
// server with an auth file checks on every call ("" without one; a
// server without an auth file ignores it). It is sent with each call, not
// once per connection, so that a reloaded auth file applies to the next
// call on every open connection. Send it only over TLS.

// GenIdArgs asks for one ID.
type GenIdArgs struct {
	Timeout time.Duration
	Token   string
}

// GenIdReply carries the ID, or Err.
type GenIdReply struct {
	Id  intf.Id
	Err *Error
}

// GenIdsArgs asks for Count IDs, 1 <= Count <= the server's maxBatch.
type GenIdsArgs struct {
	Count   int
	Timeout time.Duration
	Token   string
}

// GenIdsReply carries the IDs in increasing order, or Err.
type GenIdsReply struct {
	Ids []intf.Id
	Err *Error
}

// ExpIdArgs asks to split Id into its fields.
type ExpIdArgs struct {
	Id      intf.Id
	Timeout time.Duration
	Token   string
}

// ExpIdReply carries the fields, or Err.
type ExpIdReply struct {
	Id  intf.IdFields
	Err *Error
}

// Fields is a set of the optional fields of MakeIdArgs.
type Fields uint8

// The optional fields of MakeIdArgs.
const (
	FieldMachine Fields = 1 << iota
	FieldGenMethod
	FieldType
	FieldVersion

	// allFields is every bit defined; a request with another bit comes
	// from a newer or broken client and is refused (Check).
	allFields = FieldMachine | FieldGenMethod | FieldType | FieldVersion
)

// MakeIdArgs asks to pack an ID. Time and Seq are always used; each other
// field only when Set names it, else the server's own configuration fills
// it in. (gob drops zero values and flattens pointers, so a *int64 set to 0
// would arrive as nil: hence the explicit set.)
type MakeIdArgs struct {
	Time, Seq                         int64
	Machine, GenMethod, Type, Version int64
	Set                               Fields
	Timeout                           time.Duration
	Token                             string
}

// MakeIdReply carries the ID, or Err.
type MakeIdReply struct {
	Id  intf.Id
	Err *Error
}

// TransTimeArgs asks what time the time field Time of an ID of type Type is.
type TransTimeArgs struct {
	Time    int64
	Type    intf.IdType
	Timeout time.Duration
	Token   string
}

// TransTimeReply carries the time (UTC), or Err.
type TransTimeReply struct {
	Time time.Time
	Err  *Error
}

// SegmentArgs asks for Count segment IDs of Tag, 1 <= Count <= the
// server's maxBatch.
type SegmentArgs struct {
	Tag     string
	Count   int
	Timeout time.Duration
	Token   string
}

// SegmentReply carries the IDs in increasing order, or Err.
type SegmentReply struct {
	Ids []int64
	Err *Error
}

// SegmentRangeArgs asks for a whole range of Size IDs of Tag, for the
// client to serve itself; Size 0 asks for the tag's own step, and at most
// the server's segmentMaxRange.
type SegmentRangeArgs struct {
	Tag     string
	Size    int64
	Timeout time.Duration
	Token   string
}

// SegmentRangeReply carries the range Start..End-1, or Err.
type SegmentRangeReply struct {
	Start, End int64
	Err        *Error
}

// NewMakeIdArgs converts a request to its wire form.
func NewMakeIdArgs(r intf.MakeIdRequest) MakeIdArgs {
	a := MakeIdArgs{Time: r.Time, Seq: r.Seq}
	for _, f := range a.optional(&r) {
		if *f.req != nil {
			*f.wire = **f.req
			a.Set |= f.bit
		}
	}
	return a
}

// Check refuses a Set with bits beyond the four defined: silently ignoring
// a field the caller meant to give would make an ID from the server's own
// value instead. The error matches intf.ErrInvalidArgument and is an
// *intf.FieldError naming "set".
func (a MakeIdArgs) Check() error {
	if a.Set&^allFields != 0 {
		return fmt.Errorf("MakeIdArgs.Set has unknown bits %#x (defined: machine 1, genMethod 2, type 4, version 8): %w",
			uint8(a.Set&^allFields), intf.CheckRange("set", int64(a.Set), 0, int64(allFields)))
	}
	return nil
}

// Request converts the wire form back to a request.
func (a MakeIdArgs) Request() intf.MakeIdRequest {
	r := intf.MakeIdRequest{Time: a.Time, Seq: a.Seq}
	for _, f := range a.optional(&r) {
		if a.Set&f.bit != 0 {
			v := *f.wire
			*f.req = &v
		}
	}
	return r
}

// fieldPair is one optional field: its bit, its place in the wire form and
// its place in the request.
type fieldPair struct {
	bit  Fields
	wire *int64
	req  **int64
}

// optional pairs each optional field of a with the same field of r.
func (a *MakeIdArgs) optional(r *intf.MakeIdRequest) [4]fieldPair {
	return [4]fieldPair{
		{FieldMachine, &a.Machine, &r.Machine},
		{FieldGenMethod, &a.GenMethod, &r.GenMethod},
		{FieldType, &a.Type, &r.Type},
		{FieldVersion, &a.Version, &r.Version},
	}
}
