package segment

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

func TestValidate(t *testing.T) {
	ok := []segstore.TagInfo{
		{Tag: "order", MaxId: 0, Step: 1},
		{Tag: "order", MaxId: math.MaxInt64 - 10, Step: 10},
		{Tag: "order", MaxId: 1, Step: segspec.MaxDBStep, Description: strings.Repeat("é", segstore.MaxDescriptionLen)},
	}
	for _, ti := range ok {
		assert.NoError(t, ti.Validate(), "%+v", ti)
	}
	bad := map[string]segstore.TagInfo{
		"tag":           {Tag: "a b", MaxId: 1, Step: 1},
		"step":          {Tag: "a", MaxId: 1, Step: 0},
		"step ":         {Tag: "a", MaxId: 1, Step: segspec.MaxDBStep + 1},
		"initialMaxId":  {Tag: "a", MaxId: -1, Step: 1},
		"initialMaxId ": {Tag: "a", MaxId: math.MaxInt64 - 9, Step: 10},
		"description":   {Tag: "a", MaxId: 1, Step: 1, Description: strings.Repeat("x", segstore.MaxDescriptionLen+1)},
	}
	for field, ti := range bad {
		err := ti.Validate()
		require.Error(t, err, field)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, field)
		assert.Contains(t, err.Error(), strings.TrimSpace(field))
	}
}

func TestAllocMiss(t *testing.T) {
	assert.ErrorIs(t, segstore.AllocMiss("a", false), intf.ErrUnknownTag)
	assert.ErrorIs(t, segstore.AllocMiss("a", true), segstore.ErrMaxIdOverflow)
	assert.NotErrorIs(t, segstore.AllocMiss("a", true), intf.ErrUnknownTag)
}
