package callshape

import (
	"context"
	"sync/atomic"
)

// span is a loaded range: IDs up to end.
type span struct {
	end  int64
	_    [7]int64 // the counter on a cache line of its own
	last atomic.Int64
}

type gen struct{ hot atomic.Pointer[span] }

func newGen() *gen {
	g := &gen{}
	g.hot.Store(&span{end: 1 << 62})
	return g
}

//go:noinline
func (g *gen) slowInts(a uintptr, n int) (int64, error) { return int64(a) + int64(n), nil }

//go:noinline
func (g *gen) slowCtxTag(ctx context.Context, tag string) (int64, error) {
	return int64(len(tag)), ctx.Err()
}

// nextPointerFree is the fast path with a slow path that takes integers.
func (g *gen) nextPointerFree(a uintptr, n int) (int64, error) {
	sp := g.hot.Load()
	if sp == nil {
		return g.slowInts(a, n)
	}
	if id := sp.last.Add(1); id < sp.end {
		return id, nil
	}
	return g.slowInts(a, n)
}

// nextCtxTag is the same fast path with NextId's arguments.
func (g *gen) nextCtxTag(ctx context.Context, tag string) (int64, error) {
	sp := g.hot.Load()
	if sp == nil {
		return g.slowCtxTag(ctx, tag)
	}
	if id := sp.last.Add(1); id < sp.end {
		return id, nil
	}
	return g.slowCtxTag(ctx, tag)
}
