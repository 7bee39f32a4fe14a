package segment

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Generator issues segment-mode IDs. It implements intf.SegmentService and
// is safe for concurrent use. Call Close when done.
type Generator struct {
	s Settings

	tags      atomic.Pointer[map[string]*buffer] // replaced whole by Refresh
	refreshMu sync.Mutex                         // serialises Refresh; guards badTags and retired
	badTags   map[string]bool                    // rows with malformed tags, warned about once
	retired   map[string]*buffer                 // buffers of removed tags, for their highest range
	// refreshGen numbers the rereads as they begin; appliedGen (guarded
	// by refreshMu) is the one whose list is in force.
	refreshGen atomic.Uint64
	appliedGen uint64
	miss       missRefresh // rereads caused by unknown tags

	bg     context.Context // cancelled by Close; parent of every load
	cancel context.CancelFunc
	// isClosed is set by Close under mu, and track adds to wg under mu
	// only while it is unset, so Close's wg.Wait misses no task.
	mu        sync.Mutex
	isClosed  atomic.Bool
	wg        sync.WaitGroup // loads, miss rereads and the refresh loop
	closeOnce sync.Once
	closeErr  error
}

var _ intf.SegmentService = (*Generator)(nil)

// New validates s, reads the tag list (the database must be reachable) and
// starts the periodic refresh. Ranges are loaded on a tag's first request.
// From a successful New on, the Generator owns s.Store.
func New(ctx context.Context, s Settings) (*Generator, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Generator{s: s, badTags: map[string]bool{}, retired: map[string]*buffer{}}
	empty := map[string]*buffer{}
	g.tags.Store(&empty)
	if err := g.Refresh(ctx); err != nil {
		return nil, err
	}
	g.bg, g.cancel = context.WithCancel(context.Background())
	g.wg.Add(1)
	go g.refreshLoop(s.Clock.NewTicker(s.RefreshInterval))
	return g, nil
}

// NextIds returns n IDs of tag, 1 <= n <= intf.MaxBatch, strictly
// increasing. A batch takes whole runs from the buffers under one lock per
// range. When the buffers run dry partway, the batch fails whole (the IDs
// it had taken are skipped, never reissued).
func (g *Generator) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	if err := intf.CheckSegmentCount(n); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	if err := g.fill(ctx, tag, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// NextId returns one ID of tag, without allocating.
func (g *Generator) NextId(ctx context.Context, tag string) (int64, error) {
	var one [1]int64
	if err := g.fill(ctx, tag, one[:]); err != nil {
		return 0, err
	}
	return one[0], nil
}

// Tags lists the tags the Generator serves, sorted.
func (g *Generator) Tags() []string {
	m := *g.tags.Load()
	tags := make([]string, 0, len(m))
	for t := range m {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	return tags
}

func (g *Generator) lookup(tag string) (*buffer, error) {
	if b := (*g.tags.Load())[tag]; b != nil {
		return b, nil // only well-formed tags are in the map
	}
	if err := intf.CheckTag(tag); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("segment tag %q: %w", tag, intf.ErrUnknownTag)
}

// fill fills dst with IDs of tag, waiting at most WaitTimeout in all for
// ranges being loaded.
func (g *Generator) fill(ctx context.Context, tag string, dst []int64) error {
	if g.isClosed.Load() {
		return intf.ErrClosed
	}
	b, err := g.lookup(tag)
	if errors.Is(err, intf.ErrUnknownTag) {
		again, rerr := g.refreshAfterMiss(ctx)
		if rerr != nil {
			return fmt.Errorf("segment tag %q: not among the tags known here, and %w", tag, rerr)
		}
		if again {
			b, err = g.lookup(tag)
		}
	}
	if err != nil {
		return err
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	filled := 0
	for {
		b.mu.Lock()
		filled += b.takeLocked(dst[filled:])
		started := b.wantsLoadLocked(g.s.Clock.Now, g.s.RetryInterval) && g.startLoadLocked(b)
		if filled == len(dst) {
			b.mu.Unlock()
			return nil
		}
		wait, cause := b.loading, b.lastErr
		b.mu.Unlock()
		switch {
		case g.isClosed.Load():
			return intf.ErrClosed
		case wait == nil || (cause != nil && !started):
			// The database failed at the last attempt and no retry is
			// due, or one is already running: fail fast.
			return b.exhaustedError(cause, g.s.WaitTimeout)
		}
		if err := ctx.Err(); err != nil {
			// Checked before waiting, not only in the select: a load that
			// ends at once would otherwise win the select at random.
			return err
		}
		if timer == nil {
			timer = time.NewTimer(g.s.WaitTimeout)
		}
		select {
		case <-wait:
		case <-timer.C:
			return b.exhaustedError(nil, g.s.WaitTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the refresh and the loads, then closes the store. IDs held
// in the buffers are dropped (the next run starts at a new range). Calls
// after the first return the first result.
func (g *Generator) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.isClosed.Store(true)
		g.mu.Unlock()
		g.cancel()
		g.wg.Wait()
		g.closeErr = g.s.Store.Close()
	})
	return g.closeErr
}
