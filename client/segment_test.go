package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// memSegments opens segment mode on an in-memory store (the stores' allocation rule) with
// tags (tag[:initialMaxId[:step]],...), as the servers do.
func memSegments(t *testing.T, tags string) *segment.Generator {
	t.Helper()
	infos, err := segspec.ParseTags(tags)
	require.NoError(t, err)
	g, err := segtest.Open(context.Background(), segtest.NewMem(), infos, segment.Settings{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

func TestSegmentNextIds(t *testing.T) {
	t.Parallel()
	srv := rpctest.Start(t, rpctest.Config{MaxBatch: 100, Segments: memSegments(t, "order,invoice:1000:500")})
	c := newClient(t, []string{srv.Addr})
	ctx := context.Background()

	ids, err := c.NextIds(ctx, "order", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, ids)
	id, err := c.NextSegmentId(ctx, "order")
	require.NoError(t, err)
	assert.Equal(t, int64(2), id)
	ids, err = c.NextIds(ctx, "order", 5)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4, 5, 6, 7}, ids)
	ids, err = c.NextIds(ctx, "invoice", 100)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), ids[0])
	assert.Equal(t, int64(1099), ids[99])

	_, err = c.NextIds(ctx, "coupon", 1)
	require.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.NotErrorIs(t, err, intf.ErrUnavailable, "not a fail-over")
	assert.Contains(t, err.Error(), `"coupon"`)

	_, err = c.NextIds(ctx, "a b", 1)
	var te *intf.TagError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "a b", te.Tag)

	for _, n := range []int{0, 101} {
		_, err = c.NextIds(ctx, "order", n)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, n)
		assert.Equal(t, intf.FieldError{Field: "count", Value: int64(n), Min: 1, Max: 100}, *fe)
	}
	assert.False(t, c.eps[0].down.Load(), "no error above marks the server down")
	ids, err = c.NextIds(ctx, "order", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{8}, ids, "the errors issued nothing")
}

func TestSegmentOffOnTheServer(t *testing.T) {
	t.Parallel()
	off := rpctest.Start(t, rpctest.Config{})
	on := rpctest.Start(t, rpctest.Config{Segments: memSegments(t, "order")})
	c := newClient(t, []string{off.Addr, on.Addr})
	_, err := c.NextIds(context.Background(), "order", 1)
	require.ErrorIs(t, err, ErrSegmentOff)
	assert.NotErrorIs(t, err, intf.ErrUnavailable)
	assert.False(t, c.eps[0].down.Load(), "off is an answer, not a fail-over")
	_, err = c.GenId(context.Background())
	require.NoError(t, err)
}

// dry is an intf.SegmentService whose buffers ran dry while its database
// is down, as segment.Generator answers then.
type dry struct{ calls atomic.Int64 }

func (d *dry) NextIds(_ context.Context, tag string, _ int) ([]int64, error) {
	d.calls.Add(1)
	return nil, fmt.Errorf("segment tag %q: both buffers used up and the database cannot be reached: %w", tag, intf.ErrUnavailable)
}

// A server that cannot serve a tag now is skipped for the call but stays
// up for everything else; one that gives no answer is marked down.
func TestSegmentFailover(t *testing.T) {
	t.Parallel()
	d := &dry{}
	a := rpctest.Start(t, rpctest.Config{Machine: 1, Segments: d})
	b := rpctest.Start(t, rpctest.Config{Machine: 2, Segments: memSegments(t, "order")})
	c := newClient(t, []string{a.Addr, b.Addr})
	ctx := context.Background()

	ids, err := c.NextIds(ctx, "order", 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, ids, "served by the second server")
	assert.Equal(t, int64(1), d.calls.Load(), "the first was asked")
	assert.False(t, c.eps[0].down.Load(), "and not marked down")
	id, err := c.GenId(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), id.Fields().Machine, "Vesta IDs still come from the first server")

	ids, err = c.NextIds(ctx, "order", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{4}, ids)
	assert.Equal(t, int64(2), d.calls.Load(), "the first is asked again at the next call")

	require.NoError(t, b.Stop())
	_, err = c.NextIds(ctx, "order", 1)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), a.Addr+`: segment tag "order": both buffers used up`)
	assert.Contains(t, err.Error(), b.Addr+": ")
	assert.False(t, c.eps[0].down.Load(), "dry is not down")
	assert.True(t, c.eps[1].down.Load(), "no answer is down")
}
