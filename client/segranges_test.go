package client

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segbuf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// sharedSegments opens n generators on one in-memory store, as n servers on
// one host sharing a store.
func sharedSegments(t testing.TB, n int, tags string) []*segment.Generator {
	t.Helper()
	infos, err := segspec.ParseTags(tags)
	require.NoError(t, err)
	shared := segtest.NewMem()
	var gs []*segment.Generator
	for range n {
		g, err := segtest.Open(context.Background(), shared, infos, segment.Settings{Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, g.Close()) })
		gs = append(gs, g)
	}
	return gs
}

// Clients serving from local ranges, beside servers issuing from their
// own buffers on the same store: every ID is unique, each caller's IDs
// increase, the range size grows from the tag's step, and the hot path
// allocates nothing.
func TestSegmentRangesUnique(t *testing.T) {
	t.Parallel()
	gs := sharedSegments(t, 2, "order:1:100")
	s1 := rpctest.Start(t, rpctest.Config{Segments: gs[0]})
	s2 := rpctest.Start(t, rpctest.Config{Segments: gs[1]})
	ctx := context.Background()
	c1 := newClient(t, []string{s1.Addr, s2.Addr}, WithSegmentRanges(6400))
	c2 := newClient(t, []string{s2.Addr, s1.Addr}, WithSegmentRanges(0))
	plain := newClient(t, []string{s1.Addr}) // per-call NextIds, from the server's buffers

	first, err := c1.NextSegmentId(ctx, "order")
	require.NoError(t, err)
	assert.Equal(t, int64(1), first, "the first range has the tag's step and starts at the row's max_id")

	c1Seq, err := c1.Sequence("order") // a handle, shared by its callers
	require.NoError(t, err)
	c2Seq, err := c2.Sequence("order")
	require.NoError(t, err)
	_, err = plain.Sequence("order")
	assert.ErrorIs(t, err, intf.ErrInvalidArgument, "a handle needs WithSegmentRanges")
	const goroutines, perG = 6, 2000
	got := make([][]int64, 5*goroutines)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			for n := 0; len(got[i]) < perG; n++ {
				switch i % 5 {
				case 3, 4:
					seq := map[bool]*segbuf.Sequence{true: c1Seq, false: c2Seq}[i%5 == 3]
					id, err := seq.Next()
					if !assert.NoError(t, err) {
						return
					}
					got[i] = append(got[i], id)
				case 0:
					id, err := c1.NextSegmentId(ctx, "order")
					if !assert.NoError(t, err) {
						return
					}
					got[i] = append(got[i], id)
				case 1:
					ids, err := c2.NextIds(ctx, "order", n%13+1)
					if !assert.NoError(t, err) {
						return
					}
					got[i] = append(got[i], ids...)
				default:
					ids, err := plain.NextIds(ctx, "order", 10)
					if !assert.NoError(t, err) {
						return
					}
					got[i] = append(got[i], ids...)
				}
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{first: true}
	for _, ids := range got {
		for j, id := range ids {
			require.False(t, seen[id], "ID %d handed out twice", id)
			seen[id] = true
			if j > 0 {
				require.Greater(t, id, ids[j-1], "each caller's IDs increase")
			}
		}
	}
	st, ok := c1.SegmentStatus("order")
	require.True(t, ok)
	assert.Equal(t, int64(6400), st.Step, "the step grew from 100 to the client's max")
	assert.Equal(t, int64(100), st.Floor, "the tag's step is the floor")
}

// NextSegmentId from a loaded range allocates nothing (not parallel:
// AllocsPerRun counts the whole process).
func TestSegmentRangesAllocateNothing(t *testing.T) {
	gs := sharedSegments(t, 1, "order:1:1000000")
	srv := rpctest.Start(t, rpctest.Config{Segments: gs[0]})
	c := newClient(t, []string{srv.Addr}, WithSegmentRanges(0))
	ctx := context.Background()
	_, err := c.NextSegmentId(ctx, "order")
	require.NoError(t, err)
	seq, err := c.Sequence("order")
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := seq.Next(); err != nil {
			t.Fatal(err)
		}
	}), "Sequence.Next")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := c.NextSegmentId(ctx, "order"); err != nil {
			t.Fatal(err)
		}
	}))
}

// A server stopped while a client holds ranges: its loads fail over to
// the next server; once every server is down and the ranges are dry, the
// client says so clearly.
func TestSegmentRangesFailOverAndDry(t *testing.T) {
	t.Parallel()
	gs := sharedSegments(t, 2, "order:1:100")
	s1 := rpctest.Start(t, rpctest.Config{Segments: gs[0]})
	s2 := rpctest.Start(t, rpctest.Config{Segments: gs[1]})
	c := newClient(t, []string{s1.Addr, s2.Addr}, WithSegmentRanges(100))
	ctx := context.Background()
	seen := map[int64]bool{}
	take := func(n int) {
		t.Helper()
		for range n {
			id, err := c.NextSegmentId(ctx, "order")
			require.NoError(t, err)
			require.False(t, seen[id], "ID %d twice", id)
			seen[id] = true
		}
	}
	take(250)
	require.NoError(t, s1.Stop())
	take(1000) // every range from here on comes from s2
	require.NoError(t, s2.Stop())
	var err error
	for range 1000 { // what the client still holds, then the error
		if _, err = c.NextSegmentId(ctx, "order"); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), `segment tag "order": the ranges held here are used up and no server can hand out a new one`)

	_, err = c.NextIds(ctx, "order", 3)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
}

// Bad requests are refused as without ranges; an unknown tag is the
// server's answer; a server whose segmentMaxRange is lower than the
// client's max is followed.
func TestSegmentRangesErrors(t *testing.T) {
	t.Parallel()
	gs := sharedSegments(t, 1, "order:1:10")
	srv := rpctest.Start(t, rpctest.Config{Segments: gs[0]})
	c := newClient(t, []string{srv.Addr}, WithSegmentRanges(intf.MaxRange))
	ctx := context.Background()

	_, err := c.NextSegmentId(ctx, "coupon")
	require.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.NotErrorIs(t, err, intf.ErrUnavailable)
	_, err = c.NextSegmentId(ctx, "a b")
	var te *intf.TagError
	require.ErrorAs(t, err, &te)
	for _, n := range []int{0, intf.MaxBatch + 1} {
		_, err = c.NextIds(ctx, "order", n)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "count", fe.Field)
	}
	// Ranges of 10, 20, ... up to the server's default cap, not the
	// client's (2^31-1): the server refuses larger sizes, naming its cap.
	for range 40 {
		_, err := c.NextIds(ctx, "order", intf.MaxBatch)
		require.NoError(t, err)
	}
	st, _ := c.SegmentStatus("order")
	assert.LessOrEqual(t, st.Step, int64(serverdefaults.SegmentMaxRange))

	_, err = New([]string{srv.Addr}, WithSegmentRanges(-1))
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	require.NoError(t, c.Close())
	_, err = c.NextSegmentId(ctx, "order")
	assert.ErrorIs(t, err, intf.ErrClosed)
}

// A handle made before Close fails after it, even with IDs left in the
// range it holds; a malformed tag is an error.
func TestSequenceAfterClose(t *testing.T) {
	t.Parallel()
	gs := sharedSegments(t, 1, "order:1:1000")
	srv := rpctest.Start(t, rpctest.Config{Segments: gs[0]})
	c, err := New([]string{srv.Addr}, WithLogger(quiet), WithSegmentRanges(0))
	require.NoError(t, err)
	seq, err := c.Sequence("order")
	require.NoError(t, err)
	id, err := seq.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(1), id)
	_, err = c.Sequence("bad tag")
	var te *intf.TagError
	assert.ErrorAs(t, err, &te)
	require.NoError(t, c.Close())
	_, err = seq.Next()
	assert.ErrorIs(t, err, intf.ErrClosed)
	_, err = seq.NextContext(context.Background())
	assert.ErrorIs(t, err, intf.ErrClosed)
}
