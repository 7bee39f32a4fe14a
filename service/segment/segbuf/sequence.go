package segbuf

import "context"

// Sequence is a handle on one tag's IDs, obtained once and kept (as
// CosId's SegmentId per name): its Next skips the lookup of the tag by its
// string and takes the ID from the tag's current range with one pointer
// load, an atomic add and a bounds check while the range lasts. It is the
// tag's Buffer itself, shared by every handle of the tag; safe for
// concurrent use. service/segment's Generator and the client hand it out
// (what segment.Generator.Sequence and client.Client.Sequence return).
type Sequence Buffer

// Next returns the tag's next ID. Past the range it holds it waits for
// the next one at most its owner's wait (the Generator's WaitTimeout, the
// client's call timeout); NextContext honours a context.
func (q *Sequence) Next() (int64, error) { return Take((*Buffer)(q), TakeSlow) }

// NextContext is Next honouring ctx when it has to wait.
func (q *Sequence) NextContext(ctx context.Context) (int64, error) {
	return (*Buffer)(q).TakeContext(ctx)
}

// Tag is the handle's tag.
func (q *Sequence) Tag() string { return (*Buffer)(q).Name() }
