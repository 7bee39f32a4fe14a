package sysclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// These tests reach into Clock to put its offset where no real wall
// clock step can be forced in a test.

func TestResyncWallBehind(t *testing.T) {
	c := New()
	c.offset.Add(int64(time.Hour)) // as if the wall clock stepped back an hour
	before := c.NowNanos()
	behind := c.Resync()
	assert.InDelta(t, float64(time.Hour), float64(behind), float64(time.Second), "Resync reports how far the wall clock is behind")
	assert.GreaterOrEqual(t, c.NowNanos(), before, "and does not move the clock back")
	assert.Greater(t, c.NowNanos()-time.Now().UnixNano(), int64(59*time.Minute))
}

func TestResyncWallAhead(t *testing.T) {
	c := New()
	c.offset.Add(-int64(time.Hour)) // as if the wall clock stepped forward an hour
	assert.Less(t, c.NowNanos(), time.Now().Add(-59*time.Minute).UnixNano())
	assert.Zero(t, c.Resync())
	d := time.Duration(c.NowNanos() - time.Now().UnixNano())
	assert.Less(t, d.Abs(), time.Second, "the clock followed the wall clock forward")
}
