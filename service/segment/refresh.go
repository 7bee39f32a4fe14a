package segment

import (
	"context"
	"fmt"

	"github.com/vesta-go/vesta/intf"
)

// Refresh rereads the tag list from the store: new tags become available
// (their first range loads on their first request), removed ones disappear.
// Tags with malformed names are skipped with a warning. The Generator calls
// it every RefreshInterval; call it yourself after creating a tag to serve
// it at once.
func (g *Generator) Refresh(ctx context.Context) error {
	infos, err := g.s.Store.Tags(ctx)
	if err != nil {
		return fmt.Errorf("segment: reading the tag list: %w (%w)", intf.ErrUnavailable, err)
	}
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	old := *g.tags.Load()
	next := make(map[string]*buffer, len(infos))
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
			b = newBuffer(t.Tag)
			added = append(added, t.Tag)
		}
		next[t.Tag] = b
	}
	for t := range old {
		if _, ok := next[t]; !ok {
			removed = append(removed, t)
		}
	}
	g.tags.Store(&next)
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
