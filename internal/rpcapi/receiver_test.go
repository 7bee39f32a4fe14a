package rpcapi

import (
	"context"
	"fmt"
	"net"
	"net/rpc"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// recorder is an IdService that records the context it was called with
// and can block until that context is done.
type recorder struct {
	intf.IdService
	block    bool
	deadline chan bool // whether each call's ctx had a deadline
}

func (r *recorder) GenId(ctx context.Context) (intf.Id, error) {
	_, ok := ctx.Deadline()
	r.deadline <- ok
	if r.block {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return 42, nil
}

func (r *recorder) GenIds(_ context.Context, n int) ([]intf.Id, error) {
	ids := make([]intf.Id, n)
	for i := range ids {
		ids[i] = intf.Id(i)
	}
	return ids, nil
}

// pipe serves svc through a Receiver over an in-memory connection and
// returns the client side.
func pipe(t *testing.T, svc intf.IdService, maxBatch int) *Conn {
	t.Helper()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(svc, maxBatch)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), ServiceName)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDeadlineTravelsWithTheCall(t *testing.T) {
	r := &recorder{deadline: make(chan bool, 2)}
	c := pipe(t, r, 10)

	id, err := c.GenId(context.Background())
	require.NoError(t, err)
	assert.Equal(t, intf.Id(42), id)
	assert.False(t, <-r.deadline, "no deadline sent without one")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.GenId(ctx)
	require.NoError(t, err)
	assert.True(t, <-r.deadline, "the caller's deadline reaches the server")
}

func TestServerGivesUpWithTheCaller(t *testing.T) {
	r := &recorder{block: true, deadline: make(chan bool, 1)}
	c := pipe(t, r, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.GenId(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, <-r.deadline)
}

func TestCallWithDoneContextIsNotSent(t *testing.T) {
	r := &recorder{deadline: make(chan bool, 1)}
	c := pipe(t, r, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GenId(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, r.deadline, "the service was not called")
}

func TestBatchCap(t *testing.T) {
	c := pipe(t, &recorder{}, 10)
	ids, err := c.GenIds(context.Background(), 10)
	require.NoError(t, err)
	assert.Len(t, ids, 10)
	for _, n := range []int{0, -1, 11} {
		_, err := c.GenIds(context.Background(), n)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, n)
		assert.Equal(t, intf.FieldError{Field: "count", Value: int64(n), Min: 1, Max: 10}, *fe)
	}
}

func TestNewReceiverClampsMaxBatch(t *testing.T) {
	for _, n := range []int{0, -5, intf.MaxBatch + 1} {
		assert.Equal(t, intf.MaxBatch, NewReceiver(nil, n).maxBatch)
	}
	assert.Equal(t, 7, NewReceiver(nil, 7).maxBatch)
}

func TestUnknownServiceIsAServerError(t *testing.T) {
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(&recorder{}, 1)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), "NoSuchService")
	defer c.Close()
	_, err := c.ExpId(context.Background(), 1)
	var se rpc.ServerError
	require.ErrorAs(t, err, &se)
	assert.NotErrorIs(t, err, intf.ErrUnavailable, "the server answered")
}

func TestBrokenConnectionIsATransportError(t *testing.T) {
	c := pipe(t, &recorder{}, 1)
	require.NoError(t, c.Close())
	_, err := c.GenId(context.Background())
	var te *TransportError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, rpc.ErrShutdown)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
}

// segmentStub is an intf.SegmentService that hands out counters per tag
// and knows only the tags it was given.
type segmentStub struct {
	next     map[string]int64
	deadline chan bool
}

func (s *segmentStub) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	_, ok := ctx.Deadline()
	s.deadline <- ok
	if err := intf.CheckTag(tag); err != nil {
		return nil, err
	}
	first, ok := s.next[tag]
	if !ok {
		return nil, fmt.Errorf("segment tag %q: %w", tag, intf.ErrUnknownTag)
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	s.next[tag] = first + int64(n)
	return ids, nil
}

// segmentPipe serves a Receiver with seg over an in-memory connection.
func segmentPipe(t *testing.T, seg intf.SegmentService, maxBatch int) *Conn {
	t.Helper()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(&recorder{}, maxBatch, WithSegments(seg))))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), ServiceName)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSegmentNextIds(t *testing.T) {
	seg := &segmentStub{next: map[string]int64{"order": 1}, deadline: make(chan bool, 10)}
	c := segmentPipe(t, seg, 10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ids, err := c.NextIds(ctx, "order", 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, ids)
	assert.True(t, <-seg.deadline, "the caller's deadline reaches the segment service")
	ids, err = c.NextIds(ctx, "order", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{4}, ids)
	<-seg.deadline

	_, err = c.NextIds(ctx, "coupon", 1)
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.NotErrorIs(t, err, intf.ErrInvalidArgument)
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, CodeUnknownTag, we.Code)
	assert.Contains(t, err.Error(), `"coupon"`)
	<-seg.deadline

	_, err = c.NextIds(ctx, "a b", 1)
	var te *intf.TagError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "a b", te.Tag)
	<-seg.deadline

	for _, n := range []int{0, -1, 11} {
		_, err := c.NextIds(ctx, "order", n)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, n)
		assert.Equal(t, intf.FieldError{Field: "count", Value: int64(n), Min: 1, Max: 10}, *fe)
	}
	assert.Empty(t, seg.deadline, "counts out of range never reach the segment service")
}

func TestSegmentOff(t *testing.T) {
	c := pipe(t, &recorder{}, 10) // no WithSegments
	_, err := c.NextIds(context.Background(), "order", 1)
	assert.ErrorIs(t, err, ErrSegmentOff)
	assert.NotErrorIs(t, err, intf.ErrUnavailable)
	c = segmentPipe(t, nil, 10)
	_, err = c.NextIds(context.Background(), "order", 1)
	assert.ErrorIs(t, err, ErrSegmentOff, "a nil SegmentService is off too")
}

// A call whose deadline had passed when the server read it gets a deadline
// error and no IDs: the service is not called.
func TestPastDeadlineIsRefused(t *testing.T) {
	r := NewReceiver(&recorder{deadline: make(chan bool, 1)}, 10)
	var reply GenIdsReply
	require.NoError(t, r.GenIds(GenIdsArgs{Count: 5, Timeout: -1}, &reply))
	assert.Empty(t, reply.Ids)
	require.NotNil(t, reply.Err)
	assert.Equal(t, CodeDeadlineExceeded, reply.Err.Code)
	assert.ErrorIs(t, reply.Err, context.DeadlineExceeded)

	var one GenIdReply
	require.NoError(t, r.GenId(GenIdArgs{Timeout: -time.Second}, &one))
	assert.Zero(t, one.Id)
	assert.ErrorIs(t, errOf(one.Err), context.DeadlineExceeded)
	var made MakeIdReply
	require.NoError(t, r.MakeId(MakeIdArgs{Time: 1, Timeout: -1}, &made))
	assert.ErrorIs(t, errOf(made.Err), context.DeadlineExceeded)
	var exp ExpIdReply
	require.NoError(t, r.ExpId(ExpIdArgs{Id: 1, Timeout: -1}, &exp))
	assert.ErrorIs(t, errOf(exp.Err), context.DeadlineExceeded)
	var tt TransTimeReply
	require.NoError(t, r.TransTime(TransTimeArgs{Timeout: -1}, &tt))
	assert.ErrorIs(t, errOf(tt.Err), context.DeadlineExceeded)
	seg := &segmentStub{next: map[string]int64{"order": 1}, deadline: make(chan bool, 1)}
	var sr SegmentReply
	require.NoError(t, NewReceiver(nil, 10, WithSegments(seg)).SegmentNextIds(SegmentArgs{Tag: "order", Count: 2, Timeout: -1}, &sr))
	assert.Empty(t, sr.Ids)
	assert.ErrorIs(t, errOf(sr.Err), context.DeadlineExceeded)
	assert.Empty(t, seg.deadline, "the segment service was not called")
}

// MakeIdArgs.Set bits beyond the four defined are refused, naming the
// field, instead of being ignored.
func TestUnknownSetBitsAreRefused(t *testing.T) {
	r := NewReceiver(nil, 10) // the service is never reached
	var reply MakeIdReply
	require.NoError(t, r.MakeId(MakeIdArgs{Time: 1, Seq: 1, Set: FieldMachine | 0x20}, &reply))
	err := errOf(reply.Err)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	var fe *intf.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "set", fe.Field)
	assert.Equal(t, int64(0x21), fe.Value)
	assert.Contains(t, err.Error(), "unknown bits 0x20")
	assert.NoError(t, NewMakeIdArgs(intf.MakeIdRequest{Time: 1, Seq: 1}.WithMachine(1).WithGenMethod(1).WithType(0).WithVersion(0)).Check())
}

// stuck is an IdService and a SegmentService whose ID calls block until
// their context ends: a call the server's bound must end.
type stuck struct{ intf.IdService }

func (stuck) GenId(ctx context.Context) (intf.Id, error) { <-ctx.Done(); return 0, ctx.Err() }
func (stuck) GenIds(ctx context.Context, _ int) ([]intf.Id, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (stuck) NextIds(ctx context.Context, _ string, _ int) ([]int64, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Every ID path ends at the server's bound, with code 7 and a message that
// names it, whether or not the caller sent a Timeout of its own.
func TestCallTimeoutBoundsEveryIdCall(t *testing.T) {
	const bound = 20 * time.Millisecond
	r := NewReceiver(stuck{}, 10, WithCallTimeout(bound), WithSegments(stuck{}))
	for _, timeout := range []time.Duration{0, time.Hour} {
		calls := map[string]func() *Error{
			"GenId": func() *Error {
				var reply GenIdReply
				require.NoError(t, r.GenId(GenIdArgs{Timeout: timeout}, &reply))
				return reply.Err
			},
			"GenIds": func() *Error {
				var reply GenIdsReply
				require.NoError(t, r.GenIds(GenIdsArgs{Count: 3, Timeout: timeout}, &reply))
				return reply.Err
			},
			"SegmentNextIds": func() *Error {
				var reply SegmentReply
				require.NoError(t, r.SegmentNextIds(SegmentArgs{Tag: "order", Count: 3, Timeout: timeout}, &reply))
				return reply.Err
			},
		}
		for name, f := range calls {
			start := time.Now()
			werr := f()
			require.NotNil(t, werr, "%s with Timeout %s", name, timeout)
			assert.Equal(t, CodeDeadlineExceeded, werr.Code, "%s: %s", name, werr.Message)
			assert.Contains(t, werr.Message, "callTimeout of 20ms", name)
			assert.ErrorIs(t, werr, context.DeadlineExceeded, name)
			assert.GreaterOrEqual(t, time.Since(start), bound, "%s ended at the bound, not before", name)
		}
	}
}

// A caller's own shorter Timeout still wins over the server's bound, and
// its error does not blame the server.
func TestCallerTimeoutShorterThanTheBound(t *testing.T) {
	r := NewReceiver(stuck{}, 10, WithCallTimeout(time.Hour))
	var reply GenIdReply
	require.NoError(t, r.GenId(GenIdArgs{Timeout: 10 * time.Millisecond}, &reply))
	require.NotNil(t, reply.Err)
	assert.Equal(t, CodeDeadlineExceeded, reply.Err.Code)
	assert.NotContains(t, reply.Err.Message, "callTimeout")
}

// Through net/rpc and the client code the bound comes back as the
// caller's deadline error.
func TestCallTimeoutOverTheWire(t *testing.T) {
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(stuck{}, 10, WithCallTimeout(20*time.Millisecond))))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), ServiceName)
	t.Cleanup(func() { c.Close() })
	_, err := c.GenIds(context.Background(), 5) // no deadline of the caller's
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "callTimeout")
}
