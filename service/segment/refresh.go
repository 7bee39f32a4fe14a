package segment

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Refresh rereads the tag list from the store: new tags become available
// (their first range loads on their first request), removed ones disappear.
// Tags with malformed names are skipped with a warning. The Generator calls
// it every RefreshInterval, and after a request for a tag it does not know
// (see Settings.MissRefreshInterval).
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

// missRefresh limits the rereads of the tag list that unknown tags cause.
type missRefresh struct {
	mu      sync.Mutex
	last    time.Time     // when the last one started; zero before the first
	running chan struct{} // closed when the running one ends; nil when none runs
}

// refreshAfterMiss rereads the tag list after a request for a tag the
// Generator does not know, so that a tag created meanwhile (vesta-segment
// create-tag, an INSERT) is served at its first request. One reread runs
// at a time, at most one per MissRefreshInterval; a request that misses
// while one runs waits for it. It reports whether to look the tag up
// again: false when the reread is off or failed.
func (g *Generator) refreshAfterMiss(ctx context.Context) bool {
	if g.s.MissRefreshInterval < 0 || g.isClosed.Load() {
		return false
	}
	m := &g.miss
	m.mu.Lock()
	if running := m.running; running != nil {
		m.mu.Unlock()
		select {
		case <-running:
			return true
		case <-ctx.Done():
			return false
		}
	}
	now := g.s.Clock.Now()
	if !m.last.IsZero() && now.Sub(m.last) < g.s.MissRefreshInterval {
		m.mu.Unlock()
		return true // a reread may have ended since this request looked
	}
	done := make(chan struct{})
	m.last, m.running = now, done
	m.mu.Unlock()

	rctx, cancel := context.WithTimeout(ctx, g.s.LoadTimeout)
	err := g.Refresh(rctx)
	cancel()
	m.mu.Lock()
	m.running = nil
	m.mu.Unlock()
	close(done)
	if err != nil {
		// Load failures are logged already; this one only kept a tag unknown.
		g.s.Logger.Debug("segment: rereading the tag list after an unknown tag failed", "err", err)
		return false
	}
	return true
}
