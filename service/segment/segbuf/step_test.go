package segbuf

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNextStep(t *testing.T) {
	const maxStep = 1_000_000
	cases := []struct {
		name               string
		step, dbStep, want int64
		lasted             time.Duration
	}{
		{"under 15 min doubles", 1000, 1000, 2000, 14*time.Minute + 59*time.Second},
		{"doubling stops at the max", 600_000, 1000, maxStep, time.Minute},
		{"at the max stays", maxStep, 1000, maxStep, time.Minute},
		{"a row step above the max is kept", 2 * maxStep, 2 * maxStep, 2 * maxStep, time.Minute},
		{"15 min keeps", 4000, 1000, 4000, 15 * time.Minute},
		{"30 min keeps", 4000, 1000, 4000, 30 * time.Minute},
		{"over 30 min halves", 4000, 1000, 2000, 30*time.Minute + time.Second},
		{"halving stops at the row step", 1500, 1000, 1000, time.Hour},
		{"at the row step stays", 1000, 1000, 1000, time.Hour},
		{"a raised row step lifts the step", 1000, 5000, 5000, 20 * time.Minute},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, NextStep(c.step, c.dbStep, maxStep, c.lasted), c.name)
	}
}
