package generatorsuite_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// TestStoreContract checks what the Generator relies on, for each store.
func TestStoreContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		st := b.newDB(t).open(t)
		defer st.Close()
		require.NoError(t, st.Init(ctx), "Init is idempotent")

		tags, err := st.Tags(ctx)
		require.NoError(t, err)
		assert.Empty(t, tags)

		require.NoError(t, st.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 5, Step: 10, Description: "orders"}))
		err = st.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 99, Step: 1})
		assert.ErrorIs(t, err, segstore.ErrTagExists)
		err = st.CreateTag(ctx, segstore.TagInfo{Tag: "bad", MaxId: 1, Step: 0})
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		err = st.CreateTag(ctx, segstore.TagInfo{Tag: "bad tag", MaxId: 1, Step: 1})
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)

		maxId, dbStep, err := st.Alloc(ctx, "order", 0)
		require.NoError(t, err)
		assert.Equal(t, []int64{15, 10}, []int64{maxId, dbStep}, "step <= 0 takes the row's step; the existing row was not overwritten")
		maxId, dbStep, err = st.Alloc(ctx, "order", 7)
		require.NoError(t, err)
		assert.Equal(t, []int64{22, 10}, []int64{maxId, dbStep}, "an explicit step")

		_, _, err = st.Alloc(ctx, "missing", 0)
		assert.ErrorIs(t, err, intf.ErrUnknownTag)

		require.NoError(t, st.CreateTag(ctx, segstore.TagInfo{Tag: "full", MaxId: math.MaxInt64 - 10, Step: 10}))
		maxId, _, err = st.Alloc(ctx, "full", 0)
		require.NoError(t, err)
		assert.Equal(t, int64(math.MaxInt64), maxId)
		_, _, err = st.Alloc(ctx, "full", 0)
		assert.ErrorIs(t, err, segstore.ErrMaxIdOverflow)
		_, _, err = st.Alloc(ctx, "order", math.MaxInt64)
		assert.ErrorIs(t, err, segstore.ErrMaxIdOverflow)

		tags, err = st.Tags(ctx)
		require.NoError(t, err)
		require.Len(t, tags, 2)
		assert.Equal(t, []string{"full", "order"}, []string{tags[0].Tag, tags[1].Tag}, "sorted")
		o := tags[1]
		assert.Equal(t, []any{int64(22), int64(10), "orders"}, []any{o.MaxId, o.Step, o.Description})
		assert.False(t, o.UpdateTime.IsZero(), "update_time is read")
	})
}
