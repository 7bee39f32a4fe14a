package client

import (
	"context"

	"github.com/vesta-go/vesta/internal/segbuf"
	"github.com/vesta-go/vesta/intf"
)

// Sequence is a handle on one segment tag's IDs, obtained once and kept:
// with WithSegmentRanges its Next takes the ID from the range the client
// holds for the tag with a pointer load, an atomic add and a bounds check,
// skipping NextSegmentId's lookup of the tag by its string. Without
// ranges each Next is one call to the servers. It is safe for concurrent
// use; get one per tag and share it.
type Sequence struct {
	seq *segbuf.Seq // nil without WithSegmentRanges
	c   *Client
	tag string
}

// Sequence returns the handle of tag. It does no I/O: a malformed tag is
// its first Next's error, and the first range loads at the first Next.
// After Close, Next returns intf.ErrClosed.
func (c *Client) Sequence(tag string) *Sequence {
	q := &Sequence{c: c, tag: tag}
	if c.ranges != nil {
		q.seq = segbuf.NewSeq(tag, nil, c.ranges.find)
	}
	return q
}

// Next returns the tag's next ID, as NextSegmentId would: past the range
// held it waits for the next one at most the client's call timeout (a
// load is one call); without ranges it is one call. NextContext honours
// a context.
func (q *Sequence) Next() (int64, error) {
	if q.seq != nil {
		return q.seq.Next()
	}
	return intf.NextSegmentId(context.Background(), q.c, q.tag)
}

// NextContext is Next honouring ctx when it has to wait or call.
func (q *Sequence) NextContext(ctx context.Context) (int64, error) {
	if q.seq != nil {
		return q.seq.NextContext(ctx)
	}
	return intf.NextSegmentId(ctx, q.c, q.tag)
}

// Tag is the handle's tag.
func (q *Sequence) Tag() string { return q.tag }
