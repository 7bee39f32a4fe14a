package intf_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestCheckTag(t *testing.T) {
	for _, ok := range []string{"order", "a", "Invoice-2024", "biz.user_id", strings.Repeat("x", intf.MaxTagLen)} {
		assert.NoError(t, intf.CheckTag(ok), ok)
	}
	for _, bad := range []string{"", "a b", "a/b", "a:b", "a,b", "ä", "tag?", strings.Repeat("x", intf.MaxTagLen+1)} {
		err := intf.CheckTag(bad)
		require.Error(t, err, bad)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, bad)
		var te *intf.TagError
		require.ErrorAs(t, err, &te, bad)
		assert.Equal(t, bad, te.Tag)
		assert.NotEmpty(t, te.Reason)
	}
	assert.ErrorContains(t, intf.CheckTag("café"), `character 'é' not allowed`, "the character named whole, not its first byte")
}

func TestCheckSegmentCount(t *testing.T) {
	assert.NoError(t, intf.CheckSegmentCount(1))
	assert.NoError(t, intf.CheckSegmentCount(intf.MaxBatch))
	for _, n := range []int{0, -1, intf.MaxBatch + 1} {
		err := intf.CheckSegmentCount(n)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "count", fe.Field)
		assert.Equal(t, int64(n), fe.Value)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
}

func TestErrUnknownTagIsItsOwnError(t *testing.T) {
	assert.NotErrorIs(t, intf.ErrUnknownTag, intf.ErrInvalidArgument)
	assert.NotErrorIs(t, intf.ErrUnknownTag, intf.ErrUnavailable)
}

// segmentFunc adapts a function to intf.SegmentService.
type segmentFunc func(ctx context.Context, tag string, n int) ([]int64, error)

func (f segmentFunc) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	return f(ctx, tag, n)
}

func TestNextSegmentId(t *testing.T) {
	var asked int
	s := segmentFunc(func(_ context.Context, tag string, n int) ([]int64, error) {
		asked = n
		if tag == "none" {
			return nil, intf.ErrUnknownTag
		}
		if tag == "short" {
			return nil, nil
		}
		return []int64{42}, nil
	})
	id, err := intf.NextSegmentId(t.Context(), s, "order")
	require.NoError(t, err)
	assert.Equal(t, int64(42), id)
	assert.Equal(t, 1, asked)

	_, err = intf.NextSegmentId(t.Context(), s, "none")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	_, err = intf.NextSegmentId(t.Context(), s, "short")
	assert.True(t, errors.Is(err, intf.ErrUnavailable), "a broken implementation is reported, not indexed: %v", err)
}
