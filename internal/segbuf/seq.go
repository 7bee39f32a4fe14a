package segbuf

import (
	"context"
	"sync/atomic"
)

// Seq is a handle on one name's IDs, obtained once (as CosId's SegmentId
// per name): Next takes an ID from the name's current range with no
// lookup of the name, no string comparison and no call — a pointer load,
// the range's pointer load, an atomic add and a bounds check, which Go
// inlines into the caller. Past the range's threshold, at its end, or
// before the name has a buffer, Next takes the slow path: find (the
// owner's lookup, which also says when the owner is closed) and the
// buffer's Next. It is safe for concurrent use.
type Seq struct {
	buf  atomic.Pointer[Buffer] // dry until the slow path finds the name's
	name string
	find func(ctx context.Context, name string) (*Buffer, error)
}

// dry is the buffer of a Seq whose name has none yet: its range is used
// up, so every Next takes the slow path.
var dry = New("", nil, nil)

// NewSeq returns the handle of name; b is its buffer when the owner has
// one already (nil: find makes or finds it at the first Next). find must
// return the owner's error once it is closed.
func NewSeq(name string, b *Buffer, find func(ctx context.Context, name string) (*Buffer, error)) *Seq {
	s := &Seq{name: name, find: find}
	if b == nil {
		b = dry
	}
	s.buf.Store(b)
	return s
}

// Name is the handle's name.
func (s *Seq) Name() string { return s.name }

// Next returns the next ID of the name: from the current range while it
// lasts below its threshold (the fast path), else through next. It takes
// no context, so that the slow path receives only integers: Go stores a
// context an entry receives to the stack before the locked add, which
// costs the fast path more than the add (scripts/callshape). The slow path
// waits for a range as Buffer.Next does, bounded by Policy.WaitTimeout;
// NextContext also honours a context.
func (s *Seq) Next() (int64, error) {
	sp := s.buf.Load().cur.Load()
	fast, end := sp.fastEnd.Load(), sp.end // read before the add, which waits for them
	id := sp.last.Add(1)
	if uint64(id) < uint64(fast) {
		return id, nil
	}
	return s.next(context.Background(), id, end)
}

// NextContext is Next honouring ctx on its slow path.
func (s *Seq) NextContext(ctx context.Context) (int64, error) {
	sp := s.buf.Load().cur.Load()
	fast, end := sp.fastEnd.Load(), sp.end
	id := sp.last.Add(1)
	if uint64(id) < uint64(fast) {
		return id, nil
	}
	return s.next(ctx, id, end)
}

// next is the slow path, id having been taken from a range that ends at
// end. Inside it (past its threshold) the ID is the caller's, and the
// first such caller starts the spare's load (Kick is single flight, as for
// Set.TryNext's taker of the threshold) and opens the rest of the range
// to the fast path. Past its end (or on the dry buffer) it finds the
// name's buffer, which says when the owner is closed, and takes the
// buffer's Next: the spare, or a wait for a load.
func (s *Seq) next(ctx context.Context, id, end int64) (int64, error) {
	if uint64(id) < uint64(end) {
		b := s.buf.Load()
		if sp := b.cur.Load(); sp.start <= id && id < sp.end && sp.fastEnd.Load() != sp.end {
			sp.fastEnd.Store(sp.end)
			b.Kick()
		}
		return id, nil
	}
	b, err := s.find(ctx, s.name)
	if err != nil {
		return 0, err
	}
	if b != s.buf.Load() {
		s.buf.Store(b)
	}
	return b.Next(ctx)
}
