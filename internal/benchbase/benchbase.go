// Package benchbase is the baseline the segment benchmarks compare with: a
// bare atomic.Int64.Add per ID, serial and with 64 goroutines, measured the
// way the embedded generator's NextId and the client's NextSegmentId are
// (scripts/bench-segment-range.sh prints the ratios). Test support only.
package benchbase

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Parallelism makes RunParallel run 64 goroutines, whatever GOMAXPROCS.
func Parallelism() int { return max(1, 64/runtime.GOMAXPROCS(0)) }

// Sink keeps the serial loop's result alive.
var Sink int64

// BareAtomic runs the baseline as sub-benchmarks "serial" and "parallel".
func BareAtomic(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		var c atomic.Int64
		for b.Loop() {
			Sink = c.Add(1)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var c atomic.Int64
		b.SetParallelism(Parallelism())
		b.RunParallel(func(pb *testing.PB) {
			var x int64
			for pb.Next() {
				x = c.Add(1)
			}
			_ = x
		})
	})
}
