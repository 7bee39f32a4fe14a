package access

import (
	"context"

	"github.com/vesta-go/vesta/intf"
)

// RangeGrant is the quota's part of a segment range handed out whole: the
// size to ask the store and the grant its IDs are charged to. Both doors
// use it, so a range counts the same over REST and RPC.
type RangeGrant struct {
	Grant
	// Size is the size to ask the store: the size asked, cut to the
	// caller's burst; 0 (the tag's step) stays 0.
	Size  int64
	limit int64 // the most IDs one range may hold; 0: no quota
}

// TakeRange takes the IDs of a range of size IDs (0: the tag's step) from
// c's quota, as TakeWait does for a batch: a range counts its IDs, not one
// call. Under a quota a range never holds more than the caller's burst: a
// larger size is cut to it (the caller gets a shorter range, which a range
// may always be), and a range of the tag's step, whose size is known only
// once the store has allocated it, takes one ID now and the rest when
// Settle cuts it to the burst and charges it.
func (g *Guard) TakeRange(ctx context.Context, c Caller, remote string, size int64) (RangeGrant, error) {
	_, _, burst := g.quota(c, remote)
	rg := RangeGrant{Size: size, limit: burst}
	if burst > 0 && size > burst {
		rg.Size = burst
	}
	n := max(rg.Size, 1)
	gr, err := g.TakeWait(ctx, c, remote, int(n))
	if err != nil {
		return RangeGrant{}, err
	}
	rg.Grant = gr
	return rg, nil
}

// Settle settles the grant with the store's answer and returns the range
// to hand out: cut to the caller's burst (the IDs cut off are never issued
// by anyone: a gap, as a range a client drops) and charged to its quota; a
// failed allocation takes nothing.
func (rg RangeGrant) Settle(r intf.SegmentRange, err error) intf.SegmentRange {
	if err != nil {
		rg.Done(0)
		return r
	}
	if rg.limit > 0 && r.End-r.Start > rg.limit {
		r.End = r.Start + rg.limit
	}
	rg.Done(int(r.End - r.Start))
	return r
}
