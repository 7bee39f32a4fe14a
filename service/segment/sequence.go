package segment

import (
	"context"

	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Sequence is a handle on one tag's IDs, obtained once and kept: its Next
// skips what NextId does on every call, finding the tag by its string
// (segbuf.Sequence).
type Sequence = segbuf.Sequence

// Sequence returns the handle of tag: the tag's buffer, looked up as
// NextId does (a tag the Generator does not know yet is looked for by
// rereading the tag list, within ctx). A malformed or unknown tag is an
// error, as for NextId. A tag removed from the store later keeps serving
// the range its handle holds, then fails as NextId does; after Close,
// Next returns intf.ErrClosed.
func (g *Generator) Sequence(ctx context.Context, tag string) (*Sequence, error) {
	b, err := g.buffer(ctx, tag)
	if err != nil {
		return nil, err
	}
	return (*Sequence)(b), nil
}
