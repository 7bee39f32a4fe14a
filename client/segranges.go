package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// ranges serves segment IDs from ranges the client holds (WithSegmentRanges):
// one segbuf.Buffer per tag, the same lock-free double buffer as the
// embedded generator's, loading its ranges with SegmentRange calls through
// the client's fail-over.
type ranges struct {
	c      *Client
	tags   *segbuf.Set // &c.segTags
	policy segbuf.Policy
	// serverMax is the smallest segmentMaxRange a server told of (its
	// refusal of a larger size); 0 until one did.
	serverMax atomic.Int64

	mu     sync.Mutex // orders the loads' start against close
	closed bool
}

func newRanges(c *Client) *ranges {
	r := &ranges{c: c, tags: &c.segTags}
	// A caller that finds both ranges used up waits for the load in
	// flight, which is one call (bounded by the call timeout, fail-over
	// included); three times that leaves room for a busy scheduler: 64
	// goroutines taking IDs flat out delay the loader's goroutine too.
	wait := 3 * c.opts.callTimeout
	if wait <= 0 {
		wait = time.Minute
	}
	r.policy = segbuf.Policy{
		MaxStep:       c.opts.segmentRanges,
		WaitTimeout:   wait,
		RetryInterval: c.opts.backoffMin,
		Now:           time.Now,
		Go:            r.goLoad,
		Closed:        c.closed.Load,
		Exhausted:     exhausted,
		Report: func(tag string, err error, wasFailing bool) {
			switch {
			case err != nil && !wasFailing && !c.closed.Load():
				c.opts.logger.Warn("vesta client: loading a segment range failed; serving from the ranges held until they run out",
					"tag", tag, "err", err)
			case err == nil && wasFailing:
				c.opts.logger.Info("vesta client: loading segment ranges works again", "tag", tag)
			}
		},
	}
	return r
}

// goLoad runs a load in a goroutine Close waits for; false after close.
func (r *ranges) goLoad(f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.c.wg.Add(1)
	go func() {
		defer r.c.wg.Done()
		f()
	}()
	return true
}

// close stops new loads and empties the fast path; Client.Close then
// waits for the loads in flight (their calls end as the connections close).
func (r *ranges) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.tags.Close()
}

// buffer returns tag's buffer, made at its first request.
func (r *ranges) buffer(tag string) (*segbuf.Buffer, error) {
	if b := r.tags.Find(tag); b != nil {
		return b, nil
	}
	if err := intf.CheckTag(tag); err != nil {
		return nil, err // no buffer for a malformed tag
	}
	return r.tags.Add(tag, func() *segbuf.Buffer {
		return segbuf.New(tag, func(step int64) (segbuf.Range, int64, error) { return r.load(tag, step) }, &r.policy)
	}), nil
}

// load takes one range of tag from the servers, with the client's
// fail-over, under the client's context (Close ends it) and call timeout.
// step 0 asks for the tag's step, which then becomes the floor of the
// dynamic step.
func (r *ranges) load(tag string, step int64) (segbuf.Range, int64, error) {
	if m := r.serverMax.Load(); m > 0 && step > m {
		step = m
	}
	rg, err := call(r.c, r.c.ctx, segmentVerdict, func(ctx context.Context, cn *rpcapi.Conn) (intf.SegmentRange, error) {
		return cn.NextRange(ctx, tag, step)
	})
	var fe *intf.FieldError
	if errors.As(err, &fe) && fe.Field == "size" && fe.Max > 0 && step > fe.Max {
		// A server with a lower segmentMaxRange: follow it from now on.
		r.serverMax.Store(fe.Max)
		step = fe.Max
		rg, err = call(r.c, r.c.ctx, segmentVerdict, func(ctx context.Context, cn *rpcapi.Conn) (intf.SegmentRange, error) {
			return cn.NextRange(ctx, tag, step)
		})
	}
	if err != nil {
		return segbuf.Range{}, 0, err
	}
	floor := int64(0)
	if step == 0 {
		floor = rg.Size()
	}
	return segbuf.Range{Start: rg.Start, End: rg.End}, floor, nil
}

// exhausted is the error of a call that found both ranges of a tag used
// up: cause is the last load's error (nil when the wait for a load timed
// out).
func exhausted(tag string, cause error, wait time.Duration) error {
	var we *rpcapi.Error
	switch {
	case cause == nil:
		return fmt.Errorf("vesta client: segment tag %q: the ranges held here are used up and no new one came within %s: %w",
			tag, wait, intf.ErrUnavailable)
	case errors.Is(cause, intf.ErrClosed):
		return intf.ErrClosed
	case errors.Is(cause, intf.ErrUnavailable):
		return fmt.Errorf("vesta client: segment tag %q: the ranges held here are used up and no server can hand out a new one: %w", tag, cause)
	case errors.As(cause, &we):
		return cause // the server's answer: unknown tag, segment mode off, bad argument, ...
	default:
		return fmt.Errorf("vesta client: segment tag %q: the ranges held here are used up and loading a new one failed: %w", tag, cause)
	}
}

// NextSegmentId returns one segment ID of tag. With WithSegmentRanges it
// comes from a range the client holds, without allocating: one pointer
// load, one atomic add and a bounds check while the range lasts. Without,
// it is one NextIds call.
func (c *Client) NextSegmentId(ctx context.Context, tag string) (int64, error) {
	id, took := c.segTags.TryNext(tag) // Dry without WithSegmentRanges: the set stays empty
	if took != segbuf.Got {
		return c.nextSegmentId(ctx, tag, id, took)
	}
	return id, nil
}

// nextSegmentId is NextSegmentId past its fast path, given what TryNext
// found: the threshold taken (id is the caller's: start the spare's
// load), or nothing (no ranges held, another tag or string, a range used
// up). Its arguments extend NextSegmentId's in the same registers, so that
// the fast path stores none of them before its add.
func (c *Client) nextSegmentId(ctx context.Context, tag string, id int64, took segbuf.Took) (int64, error) {
	if c.ranges == nil {
		ids, err := c.NextIds(ctx, tag, 1)
		if err != nil {
			return 0, err
		}
		if len(ids) != 1 {
			return 0, fmt.Errorf("segment tag %q: asked for 1 ID, got %d: %w", tag, len(ids), intf.ErrUnavailable)
		}
		return ids[0], nil
	}
	if took == segbuf.GotAtThreshold {
		c.segTags.Kick(tag)
		return id, nil
	}
	if c.closed.Load() {
		return 0, intf.ErrClosed
	}
	b, err := c.ranges.buffer(tag)
	if err != nil {
		return 0, err
	}
	return b.Next(ctx)
}

// localIds is NextIds from the ranges held: n IDs, 1 <= n <= intf.MaxBatch.
func (c *Client) localIds(ctx context.Context, tag string, n int) ([]int64, error) {
	if err := intf.CheckRange("count", int64(n), 1, intf.MaxBatch); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, intf.ErrClosed
	}
	b, err := c.ranges.buffer(tag)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	if err := b.Fill(ctx, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// SegmentStatus describes the ranges the client holds of tag
// (WithSegmentRanges), for monitoring and tests; ok is false when it holds
// none.
func (c *Client) SegmentStatus(tag string) (st segbuf.Status, ok bool) {
	if c.ranges == nil {
		return segbuf.Status{}, false
	}
	b := c.segTags.Find(tag)
	if b == nil {
		return segbuf.Status{}, false
	}
	return b.Status(), true
}

// drop drops every buffer's ranges once the loads have ended, so that the
// handles' fast path (Sequence) ends with Close too.
func (r *ranges) drop() {
	for _, b := range r.tags.Map() {
		b.Drop()
	}
}
