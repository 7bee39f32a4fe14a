package segment

import (
	"context"
	"errors"
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

// startLoadLocked starts loading the next range of b in the background.
// It returns false after Close.
func (g *Generator) startLoadLocked(b *buffer) bool {
	done := make(chan struct{})
	step := b.nextStepLocked(g.s.Clock.Now(), g.s.MaxStep)
	if !g.goBackground(func() { g.load(b, step, done) }) {
		return false
	}
	b.loading = done // load files its range under b.mu, which the caller holds
	return true
}

// load allocates one range from the store and files it in b.
func (g *Generator) load(b *buffer, step int64, done chan struct{}) {
	began := g.s.Clock.Now()
	ctx, cancel := context.WithTimeout(g.bg, g.s.LoadTimeout)
	maxId, dbStep, err := g.s.Store.Alloc(ctx, b.tag, step)
	if errors.Is(err, ErrMaxIdOverflow) && step > 0 {
		// Near 2^63-1 a dynamic step may no longer fit where the row's
		// own step still does: take that, so the tag hands out every ID
		// it can before it ends.
		step = 0
		maxId, dbStep, err = g.s.Store.Alloc(ctx, b.tag, step)
	}
	cancel()
	now := g.s.Clock.Now()

	b.mu.Lock()
	defer b.mu.Unlock()
	defer close(done)
	b.loading = nil
	b.lastTook = now.Sub(began)
	failing := b.lastErr != nil
	if err = b.acceptLocked(step, maxId, dbStep, err, now); err != nil {
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
