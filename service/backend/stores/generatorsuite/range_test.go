package generatorsuite_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Ranges handed out whole come from the store like the generators' own:
// they never overlap each other or the IDs the generators issue, on
// either store.
func TestNextRange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db := b.newDB(t)
		f1 := newFixture(t, db, nil, segstore.TagInfo{Tag: "r", MaxId: 1, Step: 10})
		f2 := newFixture(t, db, nil)
		ctx := context.Background()
		seen := map[int64]bool{}
		add := func(id int64) {
			require.False(t, seen[id], "ID %d handed out twice", id)
			seen[id] = true
		}
		for i := range 30 {
			g := []*segment.Generator{f1.g, f2.g}[i%2]
			r, err := g.NextRange(ctx, "r", int64(i%3)*7) // 0: the row's step
			require.NoError(t, err)
			want := int64(i%3) * 7
			if want == 0 {
				want = 10
			}
			require.Equal(t, want, r.Size())
			for id := r.Start; id < r.End; id++ {
				add(id)
			}
			for _, id := range take(t, g, "r", 3) {
				add(id)
			}
		}

		for _, size := range []int64{-1, intf.MaxRange + 1} {
			_, err := f1.g.NextRange(ctx, "r", size)
			var fe *intf.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "size", fe.Field)
		}
		_, err := f1.g.NextRange(ctx, "nope", 5)
		assert.ErrorIs(t, err, intf.ErrUnknownTag)
		_, err = f1.g.NextRange(ctx, "a b", 5)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		f1.st.SetDown(true)
		_, err = f1.g.NextRange(ctx, "r", 5)
		assert.ErrorIs(t, err, intf.ErrUnavailable)
		f1.st.SetDown(false)
		require.NoError(t, f1.g.Close())
		_, err = f1.g.NextRange(ctx, "r", 5)
		assert.ErrorIs(t, err, intf.ErrClosed)
	})
}

// Step tells the row's step without drawing anything from the store.
func TestStep(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db := b.newDB(t)
		f := newFixture(t, db, nil, segstore.TagInfo{Tag: "r", MaxId: 1, Step: 40})
		ctx := context.Background()
		step, err := f.g.Step(ctx, "r")
		require.NoError(t, err)
		assert.Equal(t, int64(40), step)
		r, err := f.g.NextRange(ctx, "r", 0)
		require.NoError(t, err)
		assert.Equal(t, intf.SegmentRange{Start: 1, End: 41}, r, "Step drew nothing")

		_, err = f.g.Step(ctx, "nope")
		assert.ErrorIs(t, err, intf.ErrUnknownTag)
		_, err = f.g.Step(ctx, "a b")
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		require.NoError(t, f.g.Close())
		_, err = f.g.Step(ctx, "r")
		assert.ErrorIs(t, err, intf.ErrClosed)
	})
}
