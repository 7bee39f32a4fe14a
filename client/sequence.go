package client

import (
	"context"
	"fmt"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Sequence is a handle on one segment tag's IDs, obtained once and kept:
// its Next takes the ID from the range the client holds for the tag
// (WithSegmentRanges) with one pointer load, an atomic add and a bounds
// check, skipping NextSegmentId's lookup of the tag by its string. It is
// the tag's buffer itself, shared with NextSegmentId; safe for concurrent
// use.
type Sequence segbuf.Buffer

// Sequence returns the handle of tag. It does no I/O: the first range
// loads at the first Next. It needs WithSegmentRanges (without, every
// segment ID is a call: use NextSegmentId); a malformed tag is an error,
// and after Close, Next returns intf.ErrClosed.
func (c *Client) Sequence(tag string) (*Sequence, error) {
	if c.ranges == nil {
		return nil, fmt.Errorf("%w: vesta client: Sequence(%q) serves from ranges the client holds: make the client WithSegmentRanges, or call NextSegmentId",
			intf.ErrInvalidArgument, tag)
	}
	if c.closed.Load() {
		return nil, intf.ErrClosed
	}
	b, err := c.ranges.buffer(tag)
	if err != nil {
		return nil, err
	}
	return (*Sequence)(b), nil
}

// Next returns the tag's next ID, as NextSegmentId would: past the range
// held it waits for the next one at most the client's call timeout (a
// load is one call). NextContext honours a context.
func (q *Sequence) Next() (int64, error) { return segbuf.Take((*segbuf.Buffer)(q), segbuf.TakeSlow) }

// NextContext is Next honouring ctx when it has to wait.
func (q *Sequence) NextContext(ctx context.Context) (int64, error) {
	return (*segbuf.Buffer)(q).TakeContext(ctx)
}

// Tag is the handle's tag.
func (q *Sequence) Tag() string { return (*segbuf.Buffer)(q).Name() }
