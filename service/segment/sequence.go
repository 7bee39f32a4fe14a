package segment

import (
	"context"

	"github.com/vesta-go/vesta/internal/segbuf"
)

// Sequence is a handle on one tag's IDs, obtained once and kept (as
// CosId's SegmentId per name): its Next skips what NextId does on every
// call — finding the tag by its string — and takes the ID from the tag's
// current range with a pointer load, an atomic add and a bounds check
// while the range lasts. It is safe for concurrent use; get one per tag
// and share it.
type Sequence struct{ seq *segbuf.Seq }

// Sequence returns the handle of tag. It does no I/O: a tag the
// Generator does not know yet (created since the last reread) is looked
// up, as NextId does, at the handle's first Next, and a malformed or
// unknown tag is that Next's error. A tag removed from the store keeps
// serving the range its handle holds, then fails as NextId does; after
// Close, Next returns intf.ErrClosed.
func (g *Generator) Sequence(tag string) *Sequence {
	return &Sequence{seq: segbuf.NewSeq(tag, g.tags.Find(tag), g.buffer)}
}

// Next returns the tag's next ID, as NextId would. Past the range it
// holds it waits for the next range at most Settings.WaitTimeout (an
// unknown tag's reread of the tag list, at most LoadTimeout), as NextId
// under a context without a deadline does; NextContext honours a context.
func (q *Sequence) Next() (int64, error) { return q.seq.Next() }

// NextContext is Next honouring ctx when it has to wait.
func (q *Sequence) NextContext(ctx context.Context) (int64, error) { return q.seq.NextContext(ctx) }

// Tag is the handle's tag.
func (q *Sequence) Tag() string { return q.seq.Name() }
