package callshape

import (
	"context"
	"sync/atomic"
	"testing"
)

var sink int64

func BenchmarkAtomic(b *testing.B) {
	var c atomic.Int64
	for i := 0; i < b.N; i++ {
		sink = c.Add(1)
	}
}

func BenchmarkPointerFree(b *testing.B) {
	g := newGen()
	for i := 0; i < b.N; i++ {
		sink, _ = g.nextPointerFree(1, 3)
	}
}

func BenchmarkCtxTag(b *testing.B) {
	g, ctx := newGen(), context.Background()
	for i := 0; i < b.N; i++ {
		sink, _ = g.nextCtxTag(ctx, "tag")
	}
}

// The fast paths serve in order and fall to the slow path past the range.
func TestShapes(t *testing.T) {
	g := newGen()
	for want := int64(1); want <= 3; want++ {
		if id, err := g.nextPointerFree(0, 0); id != want || err != nil {
			t.Fatalf("nextPointerFree = %d, %v; want %d", id, err, want)
		}
	}
	if id, err := g.nextCtxTag(context.Background(), "tag"); id != 4 || err != nil {
		t.Fatalf("nextCtxTag = %d, %v; want 4", id, err)
	}
	g.hot.Load().end = 0
	if id, _ := g.nextCtxTag(context.Background(), "tag"); id != 3 {
		t.Fatalf("past the range: %d, want the slow path's 3", id)
	}
}
