package generatorsuite_test

import (
	"context"
	"testing"

	"github.com/vesta-go/vesta/internal/benchbase"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// benchCase is one way of asking for IDs.
type benchCase struct {
	name     string
	batch    int   // IDs per call: 1 uses NextId (or Sequence.Next, seq), more NextIds
	seq      bool  // one Sequence handle of the tag, got before the timer starts
	parallel bool  // RunParallel with 64 goroutines in all
	maxStep  int64 // 0: Leaf's dynamic step up to 1,000,000
	step     int64 // the tag row's step; 0: 1000
}

// loadedStep and loadedMax are the tag step and MaxStep of the rows that
// measure NextId from a loaded buffer, the hot path: ranges of 10,000,000
// growing to 100,000,000 IDs (a fraction of a second to seconds at full
// speed), so a load is rare and always ahead of need, from the first
// range on. With a step of 1000 and Leaf's cap of 1,000,000, a range
// lasts a few microseconds to ~20 ms here, less than a database round
// trip on this loaded machine, and 64 goroutines taking IDs flat out
// delay the loader's goroutine further: the leaf-max-step rows, with their
// waits/Mids, show that case.
const (
	loadedStep = 10_000_000
	loadedMax  = 100_000_000
)

var benchCases = []benchCase{
	{name: "NextId/serial", batch: 1, maxStep: loadedMax, step: loadedStep},
	{name: "NextId/parallel", batch: 1, parallel: true, maxStep: loadedMax, step: loadedStep},
	{name: "Seq/serial", batch: 1, seq: true, maxStep: loadedMax, step: loadedStep},
	{name: "Seq/parallel", batch: 1, seq: true, parallel: true, maxStep: loadedMax, step: loadedStep},
	{name: "NextId/serial/leaf-max-step", batch: 1},
	{name: "NextId/parallel/leaf-max-step", batch: 1, parallel: true},
	{name: "NextIds100/serial", batch: 100},
	{name: "NextIds100/parallel", batch: 100, parallel: true},
	{name: "NextId/parallel/fixed-step-1000", batch: 1, parallel: true, maxStep: 1000},
}

// BenchmarkSegment measures embedded segment-mode IDs per second for one
// tag, per store, with the real clock, and counts database round trips
// (Alloc calls) per million IDs. scripts/bench-segment.sh runs it.
func BenchmarkSegment(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			db := be.newDB(b)
			for i, bc := range benchCases {
				tag := segstore.TagInfo{Tag: "bench" + string(rune('a'+i)), MaxId: 1, Step: 1000}
				if bc.step > 0 {
					tag.Step = bc.step
				}
				f := newFixture(b, db, func(s *segment.Settings) {
					s.Clock = nil // the system clock
					s.MaxStep = bc.maxStep
				}, tag)
				b.Run(bc.name, func(b *testing.B) { runBench(b, f, tag.Tag, bc) })
			}
		})
	}
}

func runBench(b *testing.B, f *fixture, tag string, bc benchCase) {
	ctx := context.Background()
	take := func() error {
		if bc.batch == 1 {
			_, err := f.g.NextId(ctx, tag)
			return err
		}
		_, err := f.g.NextIds(ctx, tag, bc.batch)
		return err
	}
	calls := f.st.Calls()
	var waits int64
	if st, err := f.g.Status(tag); err == nil {
		waits = st.Waits
	}
	seq, err := f.g.Sequence(ctx, tag)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if bc.seq && bc.parallel {
		b.SetParallelism(benchbase.Parallelism())
		b.RunParallel(func(pb *testing.PB) {
			var err error
			for pb.Next() { // the handle's Next called directly, as the bare atomic is
				if _, err = seq.Next(); err != nil {
					break
				}
			}
			if err != nil {
				b.Error(err)
			}
		})
	} else if bc.seq {
		var err error
		for b.Loop() {
			if _, err = seq.Next(); err != nil {
				break
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	} else if bc.parallel && bc.batch == 1 {
		b.SetParallelism(benchbase.Parallelism())
		g := f.g
		b.RunParallel(func(pb *testing.PB) {
			var err error
			for pb.Next() { // NextId called directly, as the bare atomic is
				if _, err = g.NextId(ctx, tag); err != nil {
					break
				}
			}
			if err != nil {
				b.Error(err)
			}
		})
	} else if bc.parallel {
		b.SetParallelism(benchbase.Parallelism())
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := take(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else if bc.batch == 1 {
		// NextId called directly, as the bare atomic is, the generator
		// and the error in locals: the loop itself stores nothing but
		// what the call does.
		g := f.g
		var err error
		for b.Loop() {
			if _, err = g.NextId(ctx, tag); err != nil {
				break
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	} else {
		for b.Loop() {
			if err := take(); err != nil {
				b.Fatal(err)
			}
		}
	}
	ids := float64(b.N * bc.batch)
	b.ReportMetric(ids/b.Elapsed().Seconds(), "ids/s")
	b.ReportMetric(float64(f.st.Calls()-calls)/ids*1e6, "trips/Mids")
	if st, err := f.g.Status(tag); err == nil {
		b.ReportMetric(float64(st.Waits-waits)/ids*1e6, "waits/Mids")
	}
}

// BenchmarkBareAtomic is the limit of NextId from a loaded range, measured
// in the same run as BenchmarkSegment (scripts/bench-segment-range.sh
// prints the ratios).
func BenchmarkBareAtomic(b *testing.B) { benchbase.BareAtomic(b) }
