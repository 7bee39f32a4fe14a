package lograte_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/internal/lograte"
)

func TestLimiter(t *testing.T) {
	l := lograte.Limiter{Interval: time.Second}
	t0 := time.Unix(1000, 0)
	ok, n := l.Allow(t0)
	assert.True(t, ok)
	assert.Zero(t, n)
	for i := range 5 {
		ok, _ = l.Allow(t0.Add(time.Duration(i) * 100 * time.Millisecond))
		assert.False(t, ok)
	}
	ok, n = l.Allow(t0.Add(time.Second))
	assert.True(t, ok)
	assert.Equal(t, uint64(5), n)
	var zero lograte.Limiter
	ok, _ = zero.Allow(time.Time{})
	assert.True(t, ok, "the first event is logged, whatever the clock says")
	ok, _ = zero.Allow(time.Time{}.Add(lograte.DefaultInterval - 1))
	assert.False(t, ok)
}
