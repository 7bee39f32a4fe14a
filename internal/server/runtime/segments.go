package runtime

import (
	"context"

	"github.com/vesta-go/vesta/internal/server/segopen"
	"github.com/vesta-go/vesta/intf"
)

// callerSegments is open segment mode whose calls' errors reach the
// caller as segopen.Mode.CallerError words them: a store's failure as
// "segment store unavailable", its detail in the log.
type callerSegments struct {
	Segments
	r *Runtime
}

// withCallerErrors wraps what open opens in callerSegments, once per
// opening rather than once per call.
func (r *Runtime) withCallerErrors(open segopen.OpenFunc[Segments]) segopen.OpenFunc[Segments] {
	return func(ctx context.Context) (Segments, error) {
		seg, err := open(ctx)
		if err != nil || seg == nil {
			return seg, err
		}
		return &callerSegments{Segments: seg, r: r}, nil
	}
}

func (c *callerSegments) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	ids, err := c.Segments.NextIds(ctx, tag, n)
	return ids, c.r.segs.CallerError(err)
}

func (c *callerSegments) NextId(ctx context.Context, tag string) (int64, error) {
	id, err := c.Segments.NextId(ctx, tag)
	return id, c.r.segs.CallerError(err)
}

func (c *callerSegments) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	rg, err := c.Segments.NextRange(ctx, tag, size)
	return rg, c.r.segs.CallerError(err)
}

func (c *callerSegments) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	n, err := c.Segments.NextNumber(ctx, tag)
	return n, c.r.segs.CallerError(err)
}

func (c *callerSegments) Step(ctx context.Context, tag string) (int64, error) {
	step, err := c.Segments.Step(ctx, tag)
	return step, c.r.segs.CallerError(err)
}
