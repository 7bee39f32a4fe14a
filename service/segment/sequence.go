package segment

import (
	"context"

	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Sequence returns the handle of tag, obtained once and kept: its Next
// skips what NextId does on every call, finding the tag by its string.
// The handle is the tag's buffer, looked up as NextId does (a tag the Generator does not know yet is looked for by
// rereading the tag list, within ctx). A malformed or unknown tag is an
// error, as for NextId. A tag removed from the store later keeps serving
// the range its handle holds, then fails as NextId does; after Close,
// Next returns intf.ErrClosed.
func (g *Generator) Sequence(ctx context.Context, tag string) (*segbuf.Sequence, error) {
	b, err := g.buffer(ctx, tag)
	if err != nil {
		return nil, err
	}
	return (*segbuf.Sequence)(b), nil
}
