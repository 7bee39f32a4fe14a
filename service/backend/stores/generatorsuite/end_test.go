package generatorsuite_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/segdefault"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// memDB is a database on one in-memory store.
func memDB(m segstore.Store) database {
	return database{open: func(testing.TB) segstore.Store { return m }}
}

// requireEnd checks the error of a tag that has no IDs left: it names the
// tag and says so, and is not a passing outage.
func requireEnd(t *testing.T, err error, tag string) {
	t.Helper()
	require.ErrorIs(t, err, segstore.ErrMaxIdOverflow)
	assert.NotErrorIs(t, err, intf.ErrUnavailable, "not an outage: retrying cannot help")
	assert.Contains(t, err.Error(), `segment tag "`+tag+`" has handed out its last ID`)
	assert.Contains(t, err.Error(), "new tag")
}

// A tag near 2^63-1 hands out every ID a range of its step can still
// reach, in order, then fails with a clear error: never a negative or
// wrapped ID. The dynamic step (doubled on every fast load here) falls
// back to the row's step when it no longer fits.
func TestTagNearMaxInt64EndsWithAClearError(t *testing.T) {
	const first = math.MaxInt64 - 45
	f := newFixture(t, memDB(segtest.NewMem()), nil, segstore.TagInfo{Tag: "end", MaxId: first, Step: 10})
	var ids []int64
	for {
		id, err := f.g.NextId(context.Background(), "end")
		if err != nil {
			requireEnd(t, err, "end")
			break
		}
		require.Positive(t, id)
		ids = append(ids, id)
		require.Less(t, len(ids), 100, "the tag must end")
	}
	// Ranges of 10, 20, then the row's 10 where 40 no longer fits; the
	// last 5 IDs below 2^63-1 fit no range of the row's step.
	assert.Equal(t, span(first, 40), ids)
	allocs := f.st.Allocs()
	require.NotEmpty(t, allocs)
	assert.Equal(t, int64(math.MaxInt64-5), allocs[len(allocs)-1].MaxId)

	// It stays at its end, also once a retry is due and for batches.
	f.clock.Advance(10 * segdefault.RetryInterval)
	_, err := f.g.NextId(context.Background(), "end")
	requireEnd(t, err, "end")
	_, err = f.g.NextIds(context.Background(), "end", 3)
	requireEnd(t, err, "end")
}

// A batch that crosses the end of a tag fails whole with the clear error;
// it returns no IDs at all, so none can be a repeat or wrapped.
func TestBatchCrossingTheEndOfATag(t *testing.T) {
	const first = math.MaxInt64 - 25
	f := newFixture(t, memDB(segtest.NewMem()), nil, segstore.TagInfo{Tag: "end", MaxId: first, Step: 10})
	got := take(t, f.g, "end", 5)
	assert.Equal(t, span(first, 5), got)
	ids, err := f.g.NextIds(context.Background(), "end", 30)
	requireEnd(t, err, "end")
	assert.Nil(t, ids)
	// The batch's IDs are skipped, never handed out again: what is left
	// (if anything) is above them.
	for {
		id, err := f.g.NextId(context.Background(), "end")
		if err != nil {
			requireEnd(t, err, "end")
			break
		}
		require.Greater(t, id, got[len(got)-1])
		got = append(got, id)
	}
	requireIncreasing(t, got)
}

// wrapStore is a broken store whose allocation wrapped past 2^63-1.
type wrapStore struct{ segstore.Store }

func (wrapStore) Alloc(context.Context, string, int64) (int64, int64, error) {
	return math.MinInt64 + 5, 10, nil
}

// A range that would start below 0 (a store whose max_id wrapped) is
// refused: the generator never computes a negative or wrapped ID.
func TestWrappedRangeIsRefused(t *testing.T) {
	m := segtest.NewMem()
	require.NoError(t, m.CreateTag(context.Background(), segstore.TagInfo{Tag: "w", MaxId: 1, Step: 10}))
	f := newFixture(t, memDB(wrapStore{m}), nil)
	_, err := f.g.NextId(context.Background(), "w")
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrUnavailable, "a store failure, as any other")
	assert.Contains(t, err.Error(), `segment tag "w": the store returned max_id -9223372036854775803 for a range of 10 IDs`)
	assert.Contains(t, err.Error(), "below 0")
}
