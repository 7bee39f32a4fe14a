package segment

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segbuf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Generator issues segment-mode IDs. It implements intf.SegmentService and
// is safe for concurrent use. Call Close when done.
type Generator struct {
	s Settings

	tags      segbuf.Set                // the map replaced whole by Refresh; the hot tag
	refreshMu sync.Mutex                // serialises Refresh; guards badTags and retired
	badTags   map[string]bool           // rows with malformed tags, warned about once
	retired   map[string]*segbuf.Buffer // buffers of removed tags, for their highest range
	policy    *segbuf.Policy            // what every tag's buffer shares
	// refreshGen numbers the rereads as they begin; appliedGen (guarded
	// by refreshMu) is the one whose list is in force.
	refreshGen atomic.Uint64
	appliedGen uint64
	miss       missGate   // rereads of the tag list caused by unknown tags
	numbers    numberTags // the period tags served (NextNumber)

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

var (
	_ intf.SegmentService = (*Generator)(nil)
	_ intf.SegmentRanger  = (*Generator)(nil)
)

// New validates s, reads the tag list (the database must be reachable) and
// starts the periodic refresh. Ranges are loaded on a tag's first request.
// From a successful New on, the Generator owns s.Store.
func New(ctx context.Context, s Settings) (*Generator, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Generator{s: s, badTags: map[string]bool{}, retired: map[string]*segbuf.Buffer{}}
	g.policy = g.newPolicy()
	g.bg, g.cancel = context.WithCancel(context.Background())
	if err := g.Refresh(ctx); err != nil {
		g.cancel()
		return nil, err
	}
	g.wg.Add(1)
	go g.refreshLoop()
	return g, nil
}

// NextIds returns n IDs of tag, 1 <= n <= intf.MaxBatch, strictly
// increasing. A batch takes whole runs from the buffers, one atomic add
// per range it crosses. When the buffers run dry partway, the batch fails whole (the IDs
// it had taken are skipped, never reissued).
func (g *Generator) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	if err := intf.CheckRange("count", int64(n), 1, intf.MaxBatch); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	if err := g.fill(ctx, tag, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// NextId returns one ID of tag, without allocating. From a loaded range,
// asked with the same tag string as the call that loaded it, it is one
// pointer load, one atomic add and a bounds check: no lock, no map lookup.
func (g *Generator) NextId(ctx context.Context, tag string) (int64, error) {
	id, took := g.tags.TryNext(tag)
	if took != segbuf.Got {
		return g.nextId(ctx, tag, id, took)
	}
	return id, nil
}

// nextId is NextId past its fast path, given what TryNext found: the
// threshold taken (id is the caller's: start the spare's load), or
// nothing (another tag, the same tag in another string, a range used up,
// or none yet). Its arguments extend NextId's in the same registers, so
// that NextId stores none of them on the stack before its add (each store
// before a locked add delays it).
func (g *Generator) nextId(ctx context.Context, tag string, id int64, took segbuf.Took) (int64, error) {
	if took == segbuf.GotAtThreshold {
		g.tags.Kick(tag)
		return id, nil
	}
	var one [1]int64
	if err := g.fill(ctx, tag, one[:]); err != nil {
		return 0, err
	}
	return one[0], nil
}

// Tags lists the tags the Generator serves, sorted.
func (g *Generator) Tags() []string {
	m := g.tags.Map()
	tags := make([]string, 0, len(m))
	for t := range m {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	return tags
}

func (g *Generator) lookup(tag string) (*segbuf.Buffer, error) {
	if b := g.tags.Find(tag); b != nil {
		return b, nil // only well-formed tags are in the map
	}
	if err := intf.CheckTag(tag); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("segment tag %q: %w", tag, intf.ErrUnknownTag)
}

// fill fills dst with IDs of tag, waiting at most WaitTimeout in all for
// ranges being loaded: the slow path.
func (g *Generator) fill(ctx context.Context, tag string, dst []int64) error {
	b, err := g.buffer(ctx, tag)
	if err != nil {
		return err
	}
	return b.Fill(ctx, dst)
}

// buffer returns the buffer of tag, rereading the tag list once when tag
// is not known (see afterMiss).
func (g *Generator) buffer(ctx context.Context, tag string) (*segbuf.Buffer, error) {
	if g.isClosed.Load() {
		return nil, intf.ErrClosed
	}
	b, err := g.lookup(tag)
	if errors.Is(err, intf.ErrUnknownTag) {
		again, rerr := g.afterMiss(ctx, &g.miss, g.s.MissRefreshInterval, g.Refresh)
		if rerr != nil {
			return nil, fmt.Errorf("segment tag %q: not among the tags known here, and %w", tag, rerr)
		}
		if again {
			b, err = g.lookup(tag)
		}
	}
	return b, err
}

// Close stops the refresh and the loads, then closes the store. IDs held
// in the buffers are dropped (the next run starts at a new range). Calls
// after the first return the first result.
func (g *Generator) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.isClosed.Store(true)
		g.mu.Unlock()
		g.tags.Close() // after isClosed: a lookup racing with Close sees one of them
		g.cancel()
		g.wg.Wait()
		g.dropBuffers() // the handles' fast path (Sequence) ends here too
		g.closeErr = g.s.Store.Close()
	})
	return g.closeErr
}

// dropBuffers drops every buffer's ranges (current tags and retired
// ones) once the loads have ended.
func (g *Generator) dropBuffers() {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	for _, b := range g.tags.Map() {
		b.Drop()
	}
	for _, b := range g.retired {
		b.Drop()
	}
}

// NextRange allocates a range of size IDs of tag from the store, for a
// client that serves them itself (intf.SegmentRanger); size 0 takes the
// row's step. It does not touch the Generator's buffers: the range is the
// caller's alone, as any range the store hands out, and its IDs are never
// issued again by anyone. size is bounded by intf.MaxRange here; servers
// bound it by their configuration.
func (g *Generator) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	if g.isClosed.Load() {
		return intf.SegmentRange{}, intf.ErrClosed
	}
	if err := intf.CheckRange("size", size, 0, intf.MaxRange); err != nil {
		return intf.SegmentRange{}, err
	}
	b, err := g.buffer(ctx, tag)
	if err != nil {
		return intf.SegmentRange{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.s.LoadTimeout)
	defer cancel()
	maxId, dbStep, err := g.s.Store.Alloc(ctx, tag, size)
	switch {
	case errors.Is(err, segstore.ErrMaxIdOverflow):
		return intf.SegmentRange{}, fmt.Errorf("segment tag %q: no range of %d IDs fits below 2^63-1 any more (%w)", tag, size, err)
	case errors.Is(err, intf.ErrUnknownTag), ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return intf.SegmentRange{}, err
	case err != nil:
		return intf.SegmentRange{}, fmt.Errorf("segment tag %q: allocating a range: %w (%w)", tag, intf.ErrUnavailable, err)
	}
	applied := size
	if applied == 0 {
		applied = dbStep
	}
	if applied <= 0 || maxId < applied {
		return intf.SegmentRange{}, fmt.Errorf("segment tag %q: the store returned max_id %d for a range of %d IDs, which would start below 0: "+
			"was leaf_alloc edited? refusing it: %w", tag, maxId, applied, intf.ErrUnavailable)
	}
	b.CountIssued(applied) // the tag's issued count covers ranges served whole
	return intf.SegmentRange{Start: maxId - applied, End: maxId}, nil
}

// Step is the tag's own step, its row's step as last listed (a quota of the servers asks it before a range of size 0):
// what NextRange of size 0 would take, read without a database call.
func (g *Generator) Step(ctx context.Context, tag string) (int64, error) {
	if g.isClosed.Load() {
		return 0, intf.ErrClosed
	}
	b, err := g.buffer(ctx, tag)
	if err != nil {
		return 0, err
	}
	return b.Floor(), nil
}
