package client

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vesta-go/vesta/internal/doccomment"
)

// The defaults are not exported: each option's comment states its own, and
// this test keeps the comments true.
func TestOptionCommentsStateDefaults(t *testing.T) {
	docs, err := doccomment.Funcs("options.go")
	require.NoError(t, err)
	for option, want := range map[string]string{
		"WithPoolSize":       "(default " + strconv.Itoa(defaultPoolSize) + ")",
		"WithDialTimeout":    "(default " + defaultDialTimeout.String() + ")",
		"WithCallTimeout":    "(default " + defaultCallTimeout.String() + ")",
		"WithBackoff":        "(defaults " + defaultBackoffMin.String() + " and " + defaultBackoffMax.String() + ")",
		"WithHealthInterval": "(default " + defaultHealthInterval.String() + ")",
		"WithBuffer":         "(0 means 10,000,",
		"WithSegmentRanges":  "(0 means 10,000,000,",
	} {
		assert.Contains(t, docs[option], want, "the comment of %s states its default", option)
	}
	assert.Equal(t, 10_000, defaultBufferRefill)
	o := defaultOptions()
	require.NoError(t, WithSegmentRanges(0)(&o))
	assert.Equal(t, int64(10_000_000), o.segmentRanges)
}
