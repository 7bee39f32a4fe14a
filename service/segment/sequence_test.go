package segment_test

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Two generators on one store (two nodes) serve a tag of tiny ranges
// through handles and NextId at once: no ID is served twice, and each
// caller's IDs increase. Run under -race.
func TestSequenceNoDuplicateAcrossNodes(t *testing.T) {
	ctx := context.Background()
	store := segtest.NewMem()
	tags := []segspec.Tag{{Tag: "order", MaxId: 1, Step: 10}}
	var gens []*segment.Generator
	for range 2 {
		g, err := segtest.Open(ctx, store, tags, segment.Settings{Logger: quiet, MaxStep: 10})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		gens = append(gens, g)
	}
	const callers, perCaller = 12, 3000
	got := make([][]int64, callers)
	var wg sync.WaitGroup
	for c := range callers {
		g := gens[c%2]
		seq, err := g.Sequence(ctx, "order")
		require.NoError(t, err)
		wg.Go(func() {
			for range perCaller {
				var id int64
				var err error
				if c%3 == 2 {
					id, err = g.NextId(ctx, "order")
				} else {
					id, err = seq.Next()
				}
				if !assert.NoError(t, err) {
					return
				}
				got[c] = append(got[c], id)
			}
		})
	}
	wg.Wait()
	var all []int64
	for c, ids := range got {
		assert.True(t, sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }), "caller %d's IDs increase", c)
		all = append(all, ids...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for i := 1; i < len(all); i++ {
		require.NotEqual(t, all[i-1], all[i], "ID served twice")
	}
	assert.Len(t, all, callers*perCaller)
}

// A handle of a tag created since the Generator read its tags finds it
// (the tag list is reread, as NextId does); a malformed tag is an error
// naming it; after Close, Next fails even with IDs left in the range.
func TestSequenceLookupAndClose(t *testing.T) {
	ctx := context.Background()
	store := segtest.NewMem()
	g, err := segtest.Open(ctx, store, nil, segment.Settings{Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, store.CreateTag(ctx, segstore.TagInfo{Tag: "later", MaxId: 100, Step: 1000}))
	later, err := g.Sequence(ctx, "later")
	require.NoError(t, err)
	id, err := later.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(100), id)
	assert.Equal(t, "later", later.Tag())

	_, err = g.Sequence(ctx, "no such")
	var te *intf.TagError
	assert.ErrorAs(t, err, &te)
	_, err = g.Sequence(ctx, "unknown")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)

	require.NoError(t, g.Close())
	_, err = later.Next()
	assert.ErrorIs(t, err, intf.ErrClosed)
	_, err = later.NextContext(ctx)
	assert.ErrorIs(t, err, intf.ErrClosed)
}
