package intf_test

import (
	"context"
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

func TestErrUnknownTagIsItsOwnError(t *testing.T) {
	assert.NotErrorIs(t, intf.ErrUnknownTag, intf.ErrInvalidArgument)
	assert.NotErrorIs(t, intf.ErrUnknownTag, intf.ErrUnavailable)
}

// segmentFunc adapts a function to intf.SegmentService.
type segmentFunc func(ctx context.Context, tag string, n int) ([]int64, error)

func (f segmentFunc) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	return f(ctx, tag, n)
}
