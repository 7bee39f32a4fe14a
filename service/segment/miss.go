package segment

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/vesta-go/vesta/intf"
)

// missGate limits the rereads of a tag list that requests for unknown
// tags cause: the plain tags' (leaf_alloc) and the period tags' each have
// one. last and lastErr are touched only inside flight, which runs one
// reread at a time, so they need no lock of their own.
//
// Its rule, the same for both lists: a reread registers every tag it
// reads, not only the one asked for, so that a request arriving while
// the gate is shut (a reread ran less than an interval ago) finds any tag
// that existed when that reread ran.
type missGate struct {
	flight  singleflight.Group
	last    time.Time // when the last reread started; zero before the first
	lastErr error     // how the last reread failed; nil if it did not
}

// afterMiss rereads a tag list with read (which registers every tag it
// reads) after a request for a tag the Generator does not know, so that
// a tag created meanwhile (vesta-segment create-tag, an INSERT) is served
// at its first request. One reread runs at a time, at most one per
// interval (a negative interval: none), under the Generator's own context
// bounded by WaitTimeout (so one caller's short deadline cannot fail it
// for the others); every request that misses while it runs waits for it,
// or for its own context. It reports whether to look the tag up again, or
// why it could not: the reread failed (wrapping intf.ErrUnavailable: the
// tag may well exist, so "unknown" would be wrong), or the caller's
// context ended.
func (g *Generator) afterMiss(ctx context.Context, m *missGate, interval time.Duration, read func(context.Context) error) (again bool, err error) {
	if interval < 0 || g.isClosed.Load() {
		return false, nil
	}
	// DoChan runs the reread in a goroutine of its own, which outlives a
	// caller that stops waiting.
	res := m.flight.DoChan("", func() (any, error) { return nil, g.missReread(m, interval, read) })
	if err := ctx.Err(); err != nil {
		// Checked before waiting, not only in the select: a reread that
		// ends at once would otherwise win the select at random.
		return false, fmt.Errorf("segment: waiting for the tag list: %w", err)
	}
	select {
	case r := <-res:
		return r.Err == nil, r.Err
	case <-ctx.Done():
		return false, fmt.Errorf("segment: waiting for the tag list: %w", ctx.Err())
	}
}

// missReread runs read, or returns the last reread's result when that
// one started less than interval ago. Run it only inside m.flight.
func (g *Generator) missReread(m *missGate, interval time.Duration, read func(context.Context) error) error {
	now := g.now()
	if !m.last.IsZero() && now.Sub(m.last) < interval {
		return m.lastErr
	}
	if !g.track() {
		return intf.ErrClosed
	}
	defer g.wg.Done()
	m.last = now
	ctx, cancel := context.WithTimeout(g.bg, g.s.WaitTimeout)
	defer cancel()
	m.lastErr = read(ctx)
	return m.lastErr
}
