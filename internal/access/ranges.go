package access

import (
	"context"

	"github.com/vesta-go/vesta/intf"
)

// Stepper tells a tag's own step without allocating anything: the size of
// a range of size 0 (intf.SegmentRanger), which a quota needs before it
// asks the store for less. The embedded generator and the RPC server's
// segment service implement it.
type Stepper interface {
	// Step is the tag's row step (0 when not known); errors as NextIds.
	Step(ctx context.Context, tag string) (int64, error)
}

// RangeGrant is the quota's part of a segment range handed out whole: the
// size to ask the store and the grant its IDs are charged to. Both doors
// use it, so a range counts the same over REST and RPC.
type RangeGrant struct {
	Grant
	// Size is the size to ask the store: under a quota, the IDs already
	// charged; without one, the size asked (0: the tag's step).
	Size int64
}

// TakeRange charges c's quota for a range of tag that seg is to allocate,
// before it is allocated: a range counts its IDs, not one call. Under a
// quota a range never holds more than the caller's burst, and the store is
// asked for exactly what was charged:
//
//   - size IDs (1..): a larger size is cut to the burst (the caller gets a
//     shorter range, which a range may always be) and taken whole, as
//     TakeWait takes a batch;
//   - size 0, a range of the tag's step: what the bucket holds now, at most
//     the burst and the tag's step (seg's, when it is an
//     a Stepper), at least one ID; with less than one in the
//     bucket it waits or refuses as TakeWait does.
//
// So under any concurrency the IDs handed out stay within rate × time +
// burst, and the store draws no more than is handed out. Without a quota
// the size is left as asked.
func (g *Guard) TakeRange(ctx context.Context, c Caller, remote string, seg intf.SegmentRanger, tag string, size int64) (RangeGrant, error) {
	b, _, burst := g.quota(c, remote)
	if b == nil {
		return RangeGrant{Grant: Grant{c: c.c}, Size: size}, nil // counts the client's IDs only
	}
	want, upTo := min(size, burst), false
	if size == 0 {
		want, upTo = burst, true
		if st, ok := seg.(Stepper); ok {
			step, err := st.Step(ctx, tag)
			if err != nil {
				return RangeGrant{}, err
			}
			if step > 0 {
				want = min(want, step)
			}
		}
	}
	gr, err := g.takeWait(ctx, c, remote, int(want), upTo)
	if err != nil {
		return RangeGrant{}, err
	}
	return RangeGrant{Grant: gr, Size: int64(gr.n)}, nil
}

// Settle settles the grant with the store's answer and returns the range
// to hand out. Under a quota it is at most what was charged (a store that
// answered more is cut: the IDs cut off are never issued by anyone, a gap
// as a range a client drops), and what it holds less goes back to the
// quota; a failed allocation takes nothing.
func (rg RangeGrant) Settle(r intf.SegmentRange, err error) intf.SegmentRange {
	if err != nil {
		rg.Done(0)
		return r
	}
	if rg.b != nil && r.Size() > int64(rg.n) {
		r.End = r.Start + int64(rg.n)
	}
	rg.Done(int(r.Size()))
	return r
}
