package segment

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/vesta-go/vesta/internal/segbuf"
	"github.com/vesta-go/vesta/intf"
)

// Refresh rereads the tag list from the store: new tags become available
// (their first range loads on their first request), removed ones disappear.
// Tags with malformed names are skipped with a warning. The Generator calls
// it every RefreshInterval, and after a request for a tag it does not know
// (see Settings.MissRefreshInterval).
func (g *Generator) Refresh(ctx context.Context) error {
	gen := g.refreshGen.Add(1)
	infos, err := g.s.Store.Tags(ctx)
	if err != nil {
		return fmt.Errorf("segment: reading the tag list: %w (%w)", intf.ErrUnavailable, err)
	}
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	if gen < g.appliedGen {
		// A reread that began after this one has applied its list: this
		// one's may be older (a tag just created would vanish again).
		return nil
	}
	g.appliedGen = gen
	old := g.tags.Map()
	next := make(map[string]*segbuf.Buffer, len(infos))
	var added, removed []string
	for _, t := range infos {
		if err := intf.CheckTag(t.Tag); err != nil {
			if !g.badTags[t.Tag] {
				g.badTags[t.Tag] = true
				g.s.Logger.Warn("segment: skipping a leaf_alloc row with a malformed tag", "err", err)
			}
			continue
		}
		b, ok := old[t.Tag]
		if !ok {
			// A tag removed and added again gets its old buffer back: it
			// remembers the highest range this instance held, so a row
			// re-created lower cannot make it repeat IDs.
			if b, ok = g.retired[t.Tag]; ok {
				delete(g.retired, t.Tag)
			} else {
				b = g.newBuffer(t.Tag)
			}
			added = append(added, t.Tag)
		}
		b.NoteFloor(t.Step)
		next[t.Tag] = b
	}
	for t, b := range old {
		if _, ok := next[t]; !ok {
			removed = append(removed, t)
			g.retired[t] = b
		}
	}
	g.tags.Store(next)
	if len(added)+len(removed) > 0 {
		g.s.Logger.Info("segment: tags changed", "added", added, "removed", removed, "tags", len(next))
	}
	return nil
}

// refreshLoop calls Refresh on every tick until Close.
func (g *Generator) refreshLoop(t Ticker) {
	defer g.wg.Done()
	defer t.Stop()
	for {
		select {
		case <-g.bg.Done():
			return
		case <-t.C():
			ctx, cancel := context.WithTimeout(g.bg, g.s.LoadTimeout)
			if err := g.Refresh(ctx); err != nil && g.bg.Err() == nil {
				g.s.Logger.Warn("segment: refreshing the tag list failed; keeping the old one", "err", err)
			}
			cancel()
		}
	}
}

// missRefresh limits the rereads of the tag list that unknown tags cause.
// last and lastErr are touched only inside flight, which runs one reread
// at a time, so they need no lock of their own.
type missRefresh struct {
	flight  singleflight.Group
	last    time.Time // when the last reread started; zero before the first
	lastErr error     // how the last reread failed; nil if it did not
}

// refreshAfterMiss rereads the tag list after a request for a tag the
// Generator does not know, so that a tag created meanwhile (vesta-segment
// create-tag, an INSERT) is served at its first request. One reread runs
// at a time, at most one per MissRefreshInterval, under the Generator's
// own context bounded by WaitTimeout (so one caller's short deadline cannot
// fail it for the others); every request that misses while it runs waits
// for it, or for its own context. It reports whether to look the tag up
// again, or why it could not: the reread failed (wrapping
// intf.ErrUnavailable: the tag may well exist, so "unknown" would be
// wrong), or the caller's context ended.
func (g *Generator) refreshAfterMiss(ctx context.Context) (again bool, err error) {
	if g.s.MissRefreshInterval < 0 || g.isClosed.Load() {
		return false, nil
	}
	// DoChan runs the reread in a goroutine of its own, which outlives a
	// caller that stops waiting.
	res := g.miss.flight.DoChan("", func() (any, error) { return nil, g.missReread() })
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

// missReread rereads the tag list, or returns the last reread's result
// when that one started less than MissRefreshInterval ago. Run it only
// inside g.miss.flight.
func (g *Generator) missReread() error {
	m := &g.miss
	now := g.s.Clock.Now()
	if !m.last.IsZero() && now.Sub(m.last) < g.s.MissRefreshInterval {
		return m.lastErr
	}
	if !g.track() {
		return intf.ErrClosed
	}
	defer g.wg.Done()
	m.last = now
	ctx, cancel := context.WithTimeout(g.bg, g.s.WaitTimeout)
	defer cancel()
	m.lastErr = g.Refresh(ctx)
	return m.lastErr
}
