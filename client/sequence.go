package client

import (
	"fmt"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Sequence returns a handle on one segment tag's IDs, obtained once and
// kept: its Next takes the ID from the range the client holds for the tag
// (WithSegmentRanges), skipping NextSegmentId's lookup of the tag by its
// string; service/segment's Generator hands out the same type. It does no I/O: the first range
// loads at the first Next. It needs WithSegmentRanges (without, every
// segment ID is a call: use NextSegmentId); a malformed tag is an error,
// and after Close, Next returns intf.ErrClosed.
func (c *Client) Sequence(tag string) (*segbuf.Sequence, error) {
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
	return (*segbuf.Sequence)(b), nil
}
