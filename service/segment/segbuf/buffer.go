package segbuf

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/vesta-go/vesta/intf"
)

// Range is the IDs Start..End-1.
type Range struct{ Start, End int64 }

// Size is the number of IDs in r.
func (r Range) Size() int64 { return r.End - r.Start }

// Loader allocates the next range of step IDs, or of the source's own step
// when step <= 0. floor is the source's least step (a tag row's step), the
// floor of the dynamic step; 0 when unknown. A Loader bounds its own I/O
// (the Buffer calls it in the background, never under a caller's context).
type Loader func(step int64) (r Range, floor int64, err error)

// Policy is what the buffers of one owner share. Every field is required
// except Report.
type Policy struct {
	// MaxStep caps the dynamic step (a floor above it is still honoured).
	MaxStep int64
	// WaitTimeout bounds how long Fill waits for a load in flight when
	// both ranges are used up.
	WaitTimeout time.Duration
	// RetryInterval is the least time between two failed loads of one
	// buffer, so that an unreachable source is not hammered.
	RetryInterval time.Duration
	// Now is the clock of the dynamic step and the retry interval.
	Now func() time.Time
	// Go runs f in the background and returns true; once the owner is
	// closed it runs nothing and returns false.
	Go func(f func()) bool
	// Closed reports whether the owner is closed: Fill then fails with
	// intf.ErrClosed.
	Closed func() bool
	// Exhausted is the error of a Fill that found both ranges used up:
	// cause is the last load's error, nil when the wait timed out.
	Exhausted func(name string, cause error, wait time.Duration) error
	// Report, if set, is told each load's result outside the buffer's
	// lock: wasFailing says whether the load before it failed.
	Report func(name string, err error, wasFailing bool)
}

// span is one range being served, Start..End-1. last is the last ID
// taken, starting at Start-1; it may pass End-1 (callers that found the
// span used up) and even wrap past math.MaxInt64, which the unsigned
// bounds check refuses too. The read-only fields and the counter sit on
// separate cache lines, so that the callers' adds do not evict the fields
// every caller reads.
//
// key and keyLen are the data and length of the string its buffer was
// last looked up by when the span was made (Set.TryNext's check): so the
// hot path reads one pointer (Set.hot) and then this line, and nothing
// else, before its add.
type span struct {
	key        unsafe.Pointer // *byte; atomic (Find sets it on a range loaded before any Find)
	keyLen     int
	start, end int64
	preloadAt  int64 // the ID whose taker starts the next load (Set.TryNext); -1 in a continuation
	// fast bounds Take's fast path: preloadAt in a range as loaded, end in
	// its continuation (see continueLocked). Never written once published;
	// unsigned, as Take compares it, which keeps Take inlinable.
	fast uint64
	buf  *Buffer // the buffer the span is a range of: Take's slow path
	_    [8]byte
	last atomic.Int64
	_    [56]byte
}

func (b *Buffer) newSpan(r Range, key *byte, keyLen int) *span {
	s := &span{keyLen: keyLen, start: r.Start, end: r.End, preloadAt: r.Start + r.Size()/10, buf: b}
	s.fast = uint64(s.preloadAt)
	atomic.StorePointer(&s.key, unsafe.Pointer(key))
	s.last.Store(r.Start - 1)
	return s
}

// next is the ID after the last taken, at most end.
func (s *span) nextFree() int64 {
	if l := s.last.Load(); uint64(l+1) < uint64(s.end) {
		return l + 1
	}
	return s.end
}

func (s *span) left() int64 { return s.end - s.nextFree() }

// taken is how many IDs callers took from s (at most its size).
func (s *span) taken() int64 { return s.nextFree() - s.start }

// usedUp reports whether every ID of s was taken.
func (s *span) usedUp() bool { return s.nextFree() == s.end }

// position is s as Status shows it.
func (s *span) position() Position {
	return Position{Start: s.start, Next: s.nextFree(), End: s.end}
}

// Position is a range and how far it is used: Start..End-1, of which
// Next..End-1 are left.
type Position struct{ Start, Next, End int64 }

// Left is how many IDs of the range are left.
func (p Position) Left() int64 { return p.End - p.Next }

// Buffer is the double buffer of one name (a segment tag). It is safe for
// concurrent use.
type Buffer struct {
	// cur is the current *span, never nil: an unsafe.Pointer read with
	// atomic.LoadPointer (current) rather than an atomic.Pointer[span],
	// whose generic Load the inliner prices higher than Take can afford.
	cur unsafe.Pointer
	_   [56]byte // keep the line of cur read-only for the hot path
	// hotKey is the data of the last string Set.Find found this buffer
	// by: the key of the spans made from now on (see span). Written when
	// callers change strings, so not on the line of cur.
	hotKey atomic.Pointer[byte]
	// empty is the span before the first range and after Drop: used up
	// (its own, so that Take's slow path finds the buffer from it).
	empty *span
	name  string
	load  Loader
	p     *Policy

	mu    sync.Mutex
	spare *span // loaded ahead; nil when there is none
	// loading is non-nil while a load runs, and closed when it ends.
	loading chan struct{}
	// highest is the end of the last range received: a later range below
	// it would repeat IDs and is refused.
	highest  int64
	step     int64     // size of the last range
	floor    int64     // the source's step, floor of the dynamic step; 0 until known
	lastLoad time.Time // when the last range arrived; zero before the first
	lastErr  error     // of the last load; nil when it succeeded
	lastFail time.Time
	lastTook time.Duration // how long the last load (successful or not) took
	waits    atomic.Int64  // callers that waited for a load
	// retired counts the IDs taken from ranges no longer current: with
	// the current range's, how many the buffer handed out (Status). Kept
	// at each switch, under mu, so that the hot path counts nothing.
	retired int64
}

// current is the current range.
func (b *Buffer) current() *span { return (*span)(atomic.LoadPointer(&b.cur)) }

// setCurrent makes sp the current range.
func (b *Buffer) setCurrent(sp *span) { atomic.StorePointer(&b.cur, unsafe.Pointer(sp)) }

// New returns an empty Buffer: its first range loads at the first Fill.
func New(name string, load Loader, p *Policy) *Buffer {
	b := &Buffer{name: name, load: load, p: p}
	b.empty = b.newSpan(Range{}, nil, 0)
	b.setCurrent(b.empty)
	return b
}

// Name is the buffer's name.
func (b *Buffer) Name() string { return b.name }

// Took says what Set.TryNext found.
type Took uint8

const (
	// Dry: the hot range is another name's, used up, or none: call
	// Set.Find and the buffer's Next or Fill.
	Dry Took = iota
	// Got: the ID is the caller's.
	Got
	// GotAtThreshold: the ID is the caller's, and the caller took the
	// range's threshold: it must Kick the name's buffer (after returning
	// the ID is fine). Left to the caller so that TryNext stays small
	// enough to be inlined.
	GotAtThreshold
)

// take copies up to len(dst) IDs of s into dst with one atomic add and
// returns how many; fewer when s runs out.
func (b *Buffer) take(s *span, dst []int64) int {
	k := int64(len(dst))
	first := s.last.Add(k) - k + 1
	if uint64(first) >= uint64(s.end) {
		return 0
	}
	n := min(k, s.end-first)
	for j := range dst[:n] {
		dst[j] = first + int64(j)
	}
	if first <= s.preloadAt && s.preloadAt < first+n {
		b.Kick()
	}
	return int(n)
}

// Kick starts loading the spare if none is there or on its way. TryNext
// tells its caller when to call it.
func (b *Buffer) Kick() {
	b.mu.Lock()
	if b.wantsLoadLocked() {
		b.startLoadLocked()
	}
	b.mu.Unlock()
}

// Fill fills dst with IDs in increasing order, switching to the spare when
// the current range is used up, and waiting for a load in flight (at most
// WaitTimeout in all, and while ctx allows) when there is no spare. When
// the ranges run dry partway, the IDs taken so far are skipped, never
// served again.
func (b *Buffer) Fill(ctx context.Context, dst []int64) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	filled := 0
	for {
		s := b.current()
		filled += b.take(s, dst[filled:])
		if filled == len(dst) {
			return nil
		}
		// s is used up.
		b.mu.Lock()
		if b.current() != s {
			b.mu.Unlock() // another caller switched, or a load arrived
			continue
		}
		if b.spare != nil {
			b.retired += s.taken()
			b.setCurrent(b.spare)
			b.spare = nil
			b.mu.Unlock()
			continue
		}
		started := b.wantsLoadLocked() && b.startLoadLocked()
		wait, cause := b.loading, b.lastErr
		b.mu.Unlock()
		switch {
		case b.p.Closed():
			return intf.ErrClosed
		case wait == nil || (cause != nil && !started):
			// The source failed at the last attempt and no retry is due,
			// or one is already running: fail fast.
			return b.p.Exhausted(b.name, cause, b.p.WaitTimeout)
		}
		if err := ctx.Err(); err != nil {
			// Checked before waiting, not only in the select: a load that
			// ends at once would otherwise win the select at random.
			return err
		}
		if timer == nil {
			timer = time.NewTimer(b.p.WaitTimeout)
			b.waits.Add(1)
		}
		select {
		case <-wait:
		case <-timer.C:
			return b.p.Exhausted(b.name, nil, b.p.WaitTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Next returns one ID: Fill of one.
func (b *Buffer) Next(ctx context.Context) (int64, error) {
	var one [1]int64
	if err := b.Fill(ctx, one[:]); err != nil {
		return 0, err
	}
	return one[0], nil
}

// wantsLoadLocked reports whether the next range should be loaded now: no
// spare and no load yet, and no recent failure.
func (b *Buffer) wantsLoadLocked() bool {
	if b.loading != nil || b.spare != nil {
		return false
	}
	return b.lastErr == nil || b.p.Now().Sub(b.lastFail) >= b.p.RetryInterval
}

// startLoadLocked starts loading the next range in the background. It
// returns false once the owner is closed.
func (b *Buffer) startLoadLocked() bool {
	done := make(chan struct{})
	step := int64(0) // the first range: the source's own step
	if !b.lastLoad.IsZero() {
		step = NextStep(b.step, b.floor, b.p.MaxStep, b.p.Now().Sub(b.lastLoad))
	}
	if !b.p.Go(func() { b.run(step, done) }) {
		return false
	}
	b.loading = done // run files its range under b.mu, which the caller holds
	return true
}

// run loads one range and files it.
func (b *Buffer) run(step int64, done chan struct{}) {
	began := b.p.Now()
	r, floor, err := b.load(step)
	now := b.p.Now()
	b.mu.Lock()
	b.loading = nil
	b.lastTook = now.Sub(began)
	failing := b.lastErr != nil
	err = b.acceptLocked(step, r, floor, err, now)
	close(done)
	b.mu.Unlock()
	if b.p.Report != nil {
		b.p.Report(b.name, err, failing)
	}
}

// acceptLocked files the result of a load: the range becomes the current
// one if that is used up, else the spare. It returns the error the load
// counts as.
func (b *Buffer) acceptLocked(step int64, r Range, floor int64, err error, now time.Time) error {
	if err == nil && (r.Size() <= 0 || r.Start < 0 || r.Size() >= closeCount) {
		err = fmt.Errorf("segment tag %q: the source returned the range [%d, %d), which is empty or below 0: refusing it", b.name, r.Start, r.End)
	}
	if err == nil && r.Start < b.highest {
		err = fmt.Errorf("segment tag %q: got the range [%d, %d) (row step %d) below the last one, which ended at %d: "+
			"was leaf_alloc restored or edited, or do the servers use different databases? refusing it to avoid duplicates",
			b.name, r.Start, r.End, floor, b.highest)
	}
	if err != nil {
		b.lastErr, b.lastFail = err, now
		return err
	}
	s := b.newSpan(r, b.hotKey.Load(), len(b.name))
	if cur := b.current(); cur.usedUp() {
		b.retired += cur.taken()
		b.setCurrent(s)
	} else {
		b.spare = s
	}
	b.highest, b.step, b.lastLoad, b.lastErr = r.End, r.Size(), now, nil
	if floor > 0 {
		b.floor = floor
	}
	return nil
}

// Drop drops the buffer's ranges, current and spare, for an owner being
// closed: every caller then takes the slow path (Take too) and gets
// the owner's error. Loads must have ended (the owner's Go refuses new
// ones once closed); the IDs dropped are never served.
func (b *Buffer) Drop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.current()
	b.retired += cur.taken()
	cur.last.Add(closeCount) // a caller that loaded it before gets nothing from it
	b.setCurrent(b.empty)
	b.spare = nil
}

// NoteFloor records the source's step as a listing gives it, so that
// Status reports it before the first load. Values <= 0 are ignored.
func (b *Buffer) NoteFloor(floor int64) {
	if floor <= 0 {
		return
	}
	b.mu.Lock()
	b.floor = floor
	b.mu.Unlock()
}

// Floor is the source's step as last noted or loaded; 0 until known.
func (b *Buffer) Floor() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.floor
}

// CountIssued adds n IDs handed out around the buffer (a whole range given
// to a client) to Status.Issued.
func (b *Buffer) CountIssued(n int64) {
	b.mu.Lock()
	b.retired += n
	b.mu.Unlock()
}

// Status describes a buffer, for monitoring and tests.
type Status struct {
	// Current is how many IDs are left in the current range; Spare, in the
	// range loaded ahead (0 when there is none).
	Current, Spare int64
	// Step is the size of the last range loaded (0 before the first);
	// Floor the source's step (known before the first load when noted).
	Step, Floor int64
	// Loading reports a load in progress.
	Loading bool
	// Waits counts the calls that found both ranges used up and waited
	// for a load: how often the source could not keep up.
	Waits int64
	// LastLoad is when the last range arrived; LastError is the error of
	// the last load, nil when it succeeded.
	LastLoad  time.Time
	LastError error
	// LastLoadTook is how long the last load, successful or not, took (0
	// before the first).
	LastLoadTook time.Duration
	// CurrentRange is the range IDs are taken from (zero before the first
	// load); SpareRange the one loaded ahead, valid when HasSpare.
	CurrentRange, SpareRange Position
	HasSpare                 bool
	// Issued counts the IDs handed out since the buffer was made (those
	// of a range that ran dry under a batch, skipped, and CountIssued's,
	// included).
	Issued int64
}

// Status returns the buffer's state.
func (b *Buffer) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.current()
	st := Status{Current: cur.left(), Step: b.step, Floor: b.floor, Loading: b.loading != nil,
		LastLoad: b.lastLoad, LastError: b.lastErr, Waits: b.waits.Load(), Issued: b.retired + cur.taken(),
		LastLoadTook: b.lastTook, HasSpare: b.spare != nil}
	if cur != b.empty {
		st.CurrentRange = cur.position()
	}
	if b.spare != nil {
		st.Spare = b.spare.left()
		st.SpareRange = b.spare.position()
	}
	return st
}
