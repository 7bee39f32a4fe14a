package segbuf

import (
	"context"
	"sync/atomic"
)

// Take returns b's next ID for a caller that holds the buffer (a per-name
// handle: service/segment's and the client's Sequence), with no lookup of
// the name and no string comparison: one pointer load (the current
// range), an atomic add and a bounds check while the range lasts below
// its fast bound. The slow path is its argument, always TakeSlow: Go's
// inliner prices a call to a parameter at a third of another call's, so
// that a one-line method calling Take(b, TakeSlow) is inlined into its
// caller, and the constant argument then turns the call into a direct
// one. Past the bound, TakeSlow starts the spare's load, or switches to
// it, or waits for it (at most Policy.WaitTimeout; TakeContext also
// honours a context), or returns the owner's error once it is closed.
//
// Its shape is what keeps it inlinable (cost 66 of the inliner's 80, and
// 80 with a method around it, go1.26): the range read straight with
// atomic.LoadPointer, the bound unsigned, two arguments to slow (the
// span knows its buffer). TestSequenceNextIsInlined in service/segment
// checks the result.
func Take(b *Buffer, slow func(*span, int64) (int64, error)) (int64, error) {
	sp := (*span)(atomic.LoadPointer(&b.cur))
	fast := sp.fast // read before the add, which waits for it
	id := sp.last.Add(1)
	if uint64(id) < fast {
		return id, nil
	}
	return slow(sp, id)
}

// TakeSlow is Take's slow path, id having been taken from sp. It is not
// inlined, so that Take's callers stay small.
//
//go:noinline
func TakeSlow(sp *span, id int64) (int64, error) {
	return sp.buf.takeSlow(context.Background(), sp, id)
}

// TakeContext is Take honouring ctx on its slow path.
func (b *Buffer) TakeContext(ctx context.Context) (int64, error) {
	sp := b.current()
	fast := sp.fast
	id := sp.last.Add(1)
	if uint64(id) < fast {
		return id, nil
	}
	return b.takeSlow(ctx, sp, id)
}

// takeSlow is Take past the fast bound of sp, id having been taken from
// it. Below sp's end the ID is the caller's: sp is a range as loaded, past
// its threshold, and the first such caller continues it (the spare's load
// starts, and the rest of the range is served by the fast path). Past the
// end, either sp was continued or switched meanwhile (take again from the
// current range) or it is used up: Next switches to the spare, waits for
// a load, or returns the owner's error once it is closed.
func (b *Buffer) takeSlow(ctx context.Context, sp *span, id int64) (int64, error) {
	for {
		if uint64(id) < uint64(sp.end) {
			b.mu.Lock()
			b.continueLocked(sp)
			b.mu.Unlock()
			return id, nil
		}
		cur := b.current()
		if cur == sp {
			return b.Next(ctx)
		}
		sp = cur
		fast := sp.fast
		if id = sp.last.Add(1); uint64(id) < fast {
			return id, nil
		}
	}
}

// closeCount is added to a range's counter to close it: every later add
// lands past its end (or wraps below 0), which the unsigned bounds checks
// refuse, and the value before it is the last ID handed out. It holds for
// ranges of fewer than 2^62 IDs, which acceptLocked enforces (the stores
// hand out far fewer: MaxDBStep, intf.MaxRange).
const closeCount = 1 << 62

// continueLocked replaces sp, when it is still the current range and as
// loaded, by its continuation: the IDs after the last one handed out, up
// to sp's end, with the fast bound at the end. sp's counter is closed
// first, so every ID it handed out (all at most v) stays the caller's
// and none is handed out again. It starts the spare's load, as the taker
// of the threshold does (single flight).
func (b *Buffer) continueLocked(sp *span) {
	if b.current() != sp || sp.fast == uint64(sp.end) {
		return
	}
	v := sp.last.Add(closeCount) - closeCount
	start := sp.end // used up (the counter may have run past the end)
	if v < sp.end-1 {
		start = v + 1
	}
	c := &span{keyLen: sp.keyLen, start: start, end: sp.end, preloadAt: -1, fast: uint64(sp.end), buf: b}
	atomic.StorePointer(&c.key, atomic.LoadPointer(&sp.key))
	c.last.Store(start - 1)
	b.retired += start - sp.start
	b.setCurrent(c)
	if b.wantsLoadLocked() {
		b.startLoadLocked()
	}
}
