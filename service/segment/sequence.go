package segment

import (
	"context"

	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Sequence is a handle on one tag's IDs, obtained once and kept (as
// CosId's SegmentId per name): its Next skips what NextId does on every
// call — finding the tag by its string — and takes the ID from the tag's
// current range with one pointer load, an atomic add and a bounds check
// while the range lasts. It is the tag's buffer itself, shared by every
// handle of the tag and by NextId; safe for concurrent use.
type Sequence segbuf.Buffer

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

// Next returns the tag's next ID, as NextId would. Past the range it
// holds it waits for the next one at most Settings.WaitTimeout, as NextId
// under a context without a deadline does; NextContext honours a context.
func (q *Sequence) Next() (int64, error) { return segbuf.Take((*segbuf.Buffer)(q), segbuf.TakeSlow) }

// NextContext is Next honouring ctx when it has to wait.
func (q *Sequence) NextContext(ctx context.Context) (int64, error) {
	return (*segbuf.Buffer)(q).TakeContext(ctx)
}

// Tag is the handle's tag.
func (q *Sequence) Tag() string { return (*segbuf.Buffer)(q).Name() }
