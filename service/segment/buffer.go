package segment

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// span is one range of IDs: next..end-1 are left. When next reaches
// preloadAt (10% used), the following range is loaded.
type span struct {
	start, next, end, preloadAt int64
}

func newSpan(start, end int64) span {
	return span{start: start, next: start, end: end, preloadAt: start + (end-start)/10}
}

// status describes the span for TagStatus.
func (s *span) status() Range {
	return Range{Start: s.start, Next: s.next, End: s.end}
}

func (s *span) left() int64 { return s.end - s.next }

// buffer is the double buffer of one tag: the current range, and the
// spare one loaded in the background.
type buffer struct {
	tag string

	mu       sync.Mutex
	cur      span
	spare    span
	hasSpare bool
	// loading is non-nil while a load runs, and closed when it ends.
	loading chan struct{}
	// highest is the end of the last range received: a later range below
	// it would repeat IDs and is refused.
	highest  int64
	step     int64     // size of the last range
	dbStep   int64     // the row's step, floor of the dynamic step; 0 until known
	lastLoad time.Time // when the last range arrived; zero before the first
	lastErr  error     // of the last load; nil when it succeeded
	lastFail time.Time
	// lastTook is how long the last load (successful or not) waited for
	// the store.
	lastTook time.Duration
}

func newBuffer(tag string) *buffer { return &buffer{tag: tag} }

// noteDBStep records the row's step as the tag list gives it, so that
// Status reports it before the tag's first range is loaded (a load
// records it too: Alloc returns it). It is the floor of the dynamic step,
// as the row has it now.
func (b *buffer) noteDBStep(step int64) {
	if step <= 0 { // not a step any load would accept (acceptLocked)
		return
	}
	b.mu.Lock()
	b.dbStep = step
	b.mu.Unlock()
}

// takeLocked copies runs of IDs into dst, switching to the spare range
// when the current one is used up, and returns how many it copied.
func (b *buffer) takeLocked(dst []int64) int {
	n := 0
	for n < len(dst) {
		if b.cur.left() == 0 {
			if !b.hasSpare {
				break
			}
			b.cur, b.hasSpare = b.spare, false
		}
		k := min(int64(len(dst)-n), b.cur.left())
		run := dst[n : n+int(k)]
		for i := range run {
			run[i] = b.cur.next + int64(i)
		}
		b.cur.next += k
		n += int(k)
	}
	return n
}

// wantsLoadLocked reports whether the next range should be loaded now: no
// spare and no load yet, 10% of the current range used, and no recent
// failure.
func (b *buffer) wantsLoadLocked(now func() time.Time, retry time.Duration) bool {
	if b.loading != nil || b.hasSpare || (b.cur.left() > 0 && b.cur.next < b.cur.preloadAt) {
		return false
	}
	return b.lastErr == nil || now().Sub(b.lastFail) >= retry
}

// nextStepLocked is the step to ask the store for: 0 (the row's step) for
// the first range, then Leaf's dynamic step.
func (b *buffer) nextStepLocked(now time.Time, maxStep int64) int64 {
	if b.lastLoad.IsZero() {
		return 0
	}
	return nextStep(b.step, b.dbStep, maxStep, now.Sub(b.lastLoad))
}

// acceptLocked files the result of a load: the range [maxId-applied,
// maxId) becomes the current range if that one is used up, else the spare.
// It returns the error the load counts as.
func (b *buffer) acceptLocked(asked, maxId, dbStep int64, err error, now time.Time) error {
	applied := asked
	if applied <= 0 {
		applied = dbStep
	}
	if err == nil && (applied <= 0 || dbStep <= 0 || maxId < applied) {
		// maxId-applied would be negative or wrap around: never hand
		// out such IDs.
		err = fmt.Errorf("segment tag %q: the store returned max_id %d for a range of %d IDs (row step %d), which would start below 0: "+
			"was leaf_alloc edited? refusing it", b.tag, maxId, applied, dbStep)
	}
	if err == nil && maxId-applied < b.highest {
		err = fmt.Errorf("segment tag %q: the store returned the range [%d, %d) (row step %d) below the last one, which ended at %d: "+
			"was leaf_alloc restored or edited? refusing it to avoid duplicates", b.tag, maxId-applied, maxId, dbStep, b.highest)
	}
	if err != nil {
		b.lastErr, b.lastFail = err, now
		return err
	}
	s := newSpan(maxId-applied, maxId)
	if b.cur.left() == 0 {
		b.cur = s
	} else {
		b.spare, b.hasSpare = s, true
	}
	b.highest, b.step, b.dbStep, b.lastLoad, b.lastErr = maxId, applied, dbStep, now, nil
	return nil
}

// exhaustedError is what a request gets when both buffers are used up.
// cause is the last load's error, nil when the wait timed out.
func (b *buffer) exhaustedError(cause error, wait time.Duration) error {
	switch {
	case cause == nil:
		return fmt.Errorf("segment tag %q: both buffers used up and the next range did not load within %s: %w", b.tag, wait, intf.ErrUnavailable)
	case errors.Is(cause, ErrMaxIdOverflow):
		return fmt.Errorf("segment tag %q has handed out its last ID: no range of its step fits below 2^63-1 (%w): move its users to a new tag", b.tag, cause)
	case errors.Is(cause, intf.ErrUnknownTag):
		return cause
	default:
		return fmt.Errorf("segment tag %q: both buffers used up and the database cannot be reached (%v): %w", b.tag, cause, intf.ErrUnavailable)
	}
}
