package segment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segbuf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// track counts a background task that Close waits for (call g.wg.Done
// when it ends), and returns true; after Close it returns false.
func (g *Generator) track() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.isClosed.Load() {
		return false
	}
	g.wg.Add(1)
	return true
}

// goBackground runs f in a goroutine that Close waits for, and returns
// true; after Close it runs nothing and returns false.
func (g *Generator) goBackground(f func()) bool {
	if !g.track() {
		return false
	}
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// now is the Clock's time, for the durations the Generator measures.
func (g *Generator) now() time.Time { return time.Unix(0, g.s.Clock.NowNanos()) }

// newPolicy is what the buffers of g share.
func (g *Generator) newPolicy() *segbuf.Policy {
	return &segbuf.Policy{
		MaxStep:       g.s.MaxStep,
		WaitTimeout:   g.s.WaitTimeout,
		RetryInterval: g.s.RetryInterval,
		Now:           g.now,
		Go:            g.goBackground,
		Closed:        g.isClosed.Load,
		Exhausted:     exhaustedError,
		Report: func(tag string, err error, wasFailing bool) {
			switch {
			case err != nil && !wasFailing && g.bg.Err() == nil:
				g.s.Logger.Warn("segment: loading a range failed; serving from the buffers until they run out",
					"tag", tag, "err", err)
			case err == nil && wasFailing:
				g.s.Logger.Info("segment: loading ranges works again", "tag", tag)
			}
		},
	}
}

// newBuffer is the double buffer of tag, loading its ranges from the store.
func (g *Generator) newBuffer(tag string) *segbuf.Buffer {
	return segbuf.New(tag, func(step int64) (segbuf.Range, int64, error) { return g.alloc(tag, step) }, g.policy)
}

// alloc allocates one range of tag from the store: step IDs, or the row's
// step when step <= 0.
func (g *Generator) alloc(tag string, step int64) (segbuf.Range, int64, error) {
	ctx, cancel := context.WithTimeout(g.bg, g.s.LoadTimeout)
	defer cancel()
	maxId, dbStep, err := g.s.Store.Alloc(ctx, tag, step)
	if errors.Is(err, segstore.ErrMaxIdOverflow) && step > 0 {
		// Near 2^63-1 a dynamic step may no longer fit where the row's
		// own step still does: take that, so the tag hands out every ID
		// it can before it ends.
		step = 0
		maxId, dbStep, err = g.s.Store.Alloc(ctx, tag, step)
	}
	if err != nil {
		return segbuf.Range{}, 0, err
	}
	applied := step
	if applied <= 0 {
		applied = dbStep
	}
	if applied <= 0 || dbStep <= 0 || maxId < applied {
		// maxId-applied would be negative or wrap around: never hand
		// out such IDs.
		return segbuf.Range{}, 0, fmt.Errorf("segment tag %q: the store returned max_id %d for a range of %d IDs (row step %d), which would start below 0: "+
			"was leaf_alloc edited? refusing it", tag, maxId, applied, dbStep)
	}
	return segbuf.Range{Start: maxId - applied, End: maxId}, dbStep, nil
}

// exhaustedError is what a request gets when both buffers are used up.
// cause is the last load's error, nil when the wait timed out.
func exhaustedError(tag string, cause error, wait time.Duration) error {
	switch {
	case cause == nil:
		return fmt.Errorf("segment tag %q: both buffers used up and the next range did not load within %s: %w", tag, wait, intf.ErrUnavailable)
	case errors.Is(cause, segstore.ErrMaxIdOverflow):
		return fmt.Errorf("segment tag %q has handed out its last ID: no range of its step fits below 2^63-1 (%w): move its users to a new tag", tag, cause)
	case errors.Is(cause, intf.ErrUnknownTag):
		return cause
	default:
		return fmt.Errorf("segment tag %q: both buffers used up and the database cannot be reached (%v): %w", tag, cause, intf.ErrUnavailable)
	}
}
