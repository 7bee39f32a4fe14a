package client

import (
	"context"
	"testing"

	"github.com/vesta-go/vesta/internal/benchbase"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
)

var sink int64

// BenchmarkClientRanges measures NextSegmentId from a range the client
// holds (a tag whose step, 2^31-1, is never used up in a run), serial and
// with 64 goroutines, beside a bare atomic.Int64.Add measured the same
// way, and NextSegmentId as one call per ID (no ranges), the rate ranges
// replace. scripts/bench-segment-range.sh prints the ratios.
func BenchmarkClientRanges(b *testing.B) {
	g := sharedSegments(b, 1, "big:1:2147483647,small:1:1000")
	srv := rpctest.Start(b, rpctest.Config{Segments: g[0]})
	ctx := context.Background()
	ranged, err := New([]string{srv.Addr}, WithLogger(quiet), WithSegmentRanges(0))
	if err != nil {
		b.Fatal(err)
	}
	defer ranged.Close()
	plain, err := New([]string{srv.Addr}, WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	if _, err := ranged.NextSegmentId(ctx, "big"); err != nil { // the range is loaded
		b.Fatal(err)
	}
	run := func(name string, c *Client, tag string) {
		b.Run(name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				id, err := c.NextSegmentId(ctx, tag)
				if err != nil {
					b.Fatal(err)
				}
				sink = id
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(benchbase.Parallelism())
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.NextSegmentId(ctx, tag); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	run("NextSegmentId", ranged, "big")
	b.Run("BareAtomic", benchbase.BareAtomic)
	run("PerCall", plain, "small")
}
