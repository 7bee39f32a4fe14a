package segbuf

import "time"

// Leaf's thresholds for the dynamic step.
const (
	// stepGrowBelow: a range that lasted less doubles the next one.
	stepGrowBelow = 15 * time.Minute
	// stepShrinkAbove: a range that lasted more halves the next one.
	stepShrinkAbove = 30 * time.Minute
)

// NextStep is the size of the next range after one of size step lasted
// lasted: doubled (up to maxStep) under 15 minutes, kept from 15 to 30,
// halved over 30; never below dbStep, the row's own step.
func NextStep(step, dbStep, maxStep int64, lasted time.Duration) int64 {
	next := step
	switch {
	case lasted < stepGrowBelow:
		next = max(step, min(2*step, maxStep))
	case lasted > stepShrinkAbove:
		next = step / 2
	}
	return max(next, dbStep)
}
