package segment

import (
	"context"
	"fmt"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segbuf"
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

// refreshLoop calls Refresh every RefreshInterval of the Clock until
// Close, which ends its wait. A refresh late by more than an interval
// (a clock that jumped) is followed by the next one an interval later,
// not by the ones missed.
func (g *Generator) refreshLoop() {
	defer g.wg.Done()
	interval := int64(g.s.RefreshInterval)
	next := g.s.Clock.NowNanos() + interval
	for {
		if err := g.s.Clock.WaitUntil(g.bg, next); err != nil {
			if g.bg.Err() == nil {
				g.s.Logger.Error("segment: waiting on the clock failed; the tag list is no longer reread periodically", "err", err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(g.bg, g.s.LoadTimeout)
		if err := g.Refresh(ctx); err != nil && g.bg.Err() == nil {
			g.s.Logger.Warn("segment: refreshing the tag list failed; keeping the old one", "err", err)
		}
		cancel()
		next += interval
		if now := g.s.Clock.NowNanos(); next <= now {
			next = now + interval
		}
	}
}
