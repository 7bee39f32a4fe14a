package segspec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestParseTags(t *testing.T) {
	tags, err := ParseTags(" order , invoice:1000:500, coupon:0")
	require.NoError(t, err)
	assert.Equal(t, []Tag{
		{Tag: "order", MaxId: DefaultInitialMaxId, Step: DefaultTagStep},
		{Tag: "invoice", MaxId: 1000, Step: 500},
		{Tag: "coupon", MaxId: 0, Step: DefaultTagStep},
	}, tags)

	tags, err = ParseTags("  ")
	require.NoError(t, err)
	assert.Empty(t, tags)
}

func TestParseTagsRejects(t *testing.T) {
	for _, list := range []string{
		"order,", ",order", "a b", "order:x", "order:1:0", "order:-1", "order:1:2:3",
		"order:1:2147483648", "order,order:5", "order:1:",
	} {
		_, err := ParseTags(list)
		require.Error(t, err, list)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, list)
	}
}
