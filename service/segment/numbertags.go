package segment

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// numberTags are the period tags a Generator knows: every one the last
// reread of vesta_period_tags found (each reread after a miss, see
// afterMiss).
type numberTags struct {
	mu   sync.Mutex
	m    map[string]*numberTag
	bad  map[string]error // rows of the last reread whose format does not parse
	miss missGate
}

func (n *numberTags) find(tag string) (*numberTag, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[tag], n.bad[tag]
}

// numberTag returns tag's allocator, rereading the period tags when tag
// is new to the Generator.
func (g *Generator) numberTag(ctx context.Context, ps segstore.PeriodStore, tag string) (*numberTag, error) {
	n := &g.numbers
	if nt, bad := n.find(tag); nt != nil || bad != nil {
		return nt, bad
	}
	// No periodic refresh reads the period tags: a negative
	// MissRefreshInterval (no rereads on a miss) leaves them a reread per
	// millisecond at most.
	interval := max(g.s.MissRefreshInterval, time.Millisecond)
	again, err := g.afterMiss(ctx, &n.miss, interval, func(ctx context.Context) error { return g.readNumberTags(ctx, ps) })
	if err != nil {
		return nil, fmt.Errorf("period tag %q: not among the period tags known here, and %w", tag, err)
	}
	if again {
		if nt, bad := n.find(tag); nt != nil || bad != nil {
			return nt, bad
		}
	}
	return nil, fmt.Errorf("period tag %q: %w", tag, intf.ErrUnknownTag)
}

// readNumberTags rereads vesta_period_tags and registers every tag not
// known yet; the tags known keep their allocators (and the ranges they
// hold). A row whose format does not parse is kept aside with its error,
// which its requests get.
func (g *Generator) readNumberTags(ctx context.Context, ps segstore.PeriodStore) error {
	ctx, cancel := context.WithTimeout(ctx, g.s.LoadTimeout)
	defer cancel()
	tags, err := ps.PeriodTags(ctx)
	if err != nil {
		return fmt.Errorf("reading the period tags: %w (%w)", intf.ErrUnavailable, err)
	}
	n := &g.numbers
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]*numberTag{}
	}
	n.bad = map[string]error{}
	for _, t := range tags {
		if _, ok := n.m[t.Tag]; ok {
			continue
		}
		f, err := segstore.ParseFormat(t.Format, t.Group)
		if err != nil {
			n.bad[t.Tag] = fmt.Errorf("period tag %q: its row in vesta_period_tags: %w", t.Tag, err)
			continue
		}
		n.m[t.Tag] = &numberTag{tag: t.Tag, f: f, grp: t.Group}
	}
	return nil
}
