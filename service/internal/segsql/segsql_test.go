package segsql

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAllocQuery(t *testing.T) {
	q, args := AllocQuery("order", 0)
	assert.Equal(t, []any{"order"}, args)
	assert.Contains(t, q, "max_id + step")
	q, args = AllocQuery("order", 500)
	assert.Equal(t, []any{"order", int64(500)}, args)
	assert.Contains(t, q, "CAST($2 AS BIGINT)")
}
