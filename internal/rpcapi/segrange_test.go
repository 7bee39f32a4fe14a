package rpcapi

import (
	"context"
	"net"
	"net/rpc"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// rangeStub hands out ranges from one counter per tag; size 0 means 100.
type rangeStub struct{ segmentStub }

func (s *rangeStub) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	if size == 0 {
		size = 100
	}
	ids, err := s.NextIds(ctx, tag, 1)
	if err != nil {
		return intf.SegmentRange{}, err
	}
	s.next[tag] = ids[0] + size
	return intf.SegmentRange{Start: ids[0], End: ids[0] + size}, nil
}

func rangePipe(t *testing.T, seg intf.SegmentService, opts ...ReceiverOption) *Conn {
	t.Helper()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(&recorder{}, 10, append(opts, WithSegments(seg))...)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), ServiceName)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSegmentRange(t *testing.T) {
	seg := &rangeStub{segmentStub{next: map[string]int64{"order": 1}, deadline: make(chan bool, 100)}}
	c := rangePipe(t, seg, WithMaxRange(1000))
	ctx := context.Background()

	r, err := c.NextRange(ctx, "order", 1000)
	require.NoError(t, err)
	assert.Equal(t, intf.SegmentRange{Start: 1, End: 1001}, r)
	r, err = c.NextRange(ctx, "order", 0)
	require.NoError(t, err)
	assert.Equal(t, intf.SegmentRange{Start: 1001, End: 1101}, r, "size 0: the tag's step")

	for _, size := range []int64{-1, 1001} {
		_, err = c.NextRange(ctx, "order", size)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, size)
		assert.Equal(t, "size", fe.Field)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
	_, err = c.NextRange(ctx, "coupon", 10)
	assert.ErrorIs(t, err, intf.ErrUnknownTag)

	// A segment service that hands out no ranges, and segment mode off.
	c = rangePipe(t, &seg.segmentStub)
	_, err = c.NextRange(ctx, "order", 10)
	assert.ErrorIs(t, err, ErrSegmentOff)
	c = rangePipe(t, nil)
	_, err = c.NextRange(ctx, "order", 10)
	assert.ErrorIs(t, err, ErrSegmentOff)
}
