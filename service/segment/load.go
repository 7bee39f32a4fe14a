package segment

import "context"

// startLoadLocked starts loading the next range of b in the background.
// It returns false after Close.
func (g *Generator) startLoadLocked(b *buffer) bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.wg.Add(1)
	g.mu.Unlock()
	done := make(chan struct{})
	b.loading = done
	go g.load(b, b.nextStepLocked(g.s.Clock.Now(), g.s.MaxStep), done)
	return true
}

// load allocates one range from the store and files it in b.
func (g *Generator) load(b *buffer, step int64, done chan struct{}) {
	defer g.wg.Done()
	ctx, cancel := context.WithTimeout(g.bg, g.s.LoadTimeout)
	maxID, dbStep, err := g.s.Store.Alloc(ctx, b.tag, step)
	cancel()
	now := g.s.Clock.Now()

	b.mu.Lock()
	defer b.mu.Unlock()
	defer close(done)
	b.loading = nil
	failing := b.lastErr != nil
	if err = b.acceptLocked(step, maxID, dbStep, err, now); err != nil {
		if !failing && g.bg.Err() == nil {
			g.s.Logger.Warn("segment: loading a range failed; serving from the buffers until they run out",
				"tag", b.tag, "err", err)
		}
		return
	}
	if failing {
		g.s.Logger.Info("segment: loading ranges works again", "tag", b.tag)
	}
}
