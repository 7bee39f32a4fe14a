package segtest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/vesta-go/vesta/service/segment/segstore"
)

// memPeriods is Mem's part of segstore.PeriodStore: the period tags and
// each tag's periods, the period read from Mem's clock (SetNow): the
// database's clock of a test.
type memPeriods struct {
	tags  map[string]segstore.PeriodTag
	alloc map[[2]string]int64 // (tag, period) → max_id
	now   func() time.Time
}

var _ segstore.PeriodStore = (*Mem)(nil)

// SetNow sets the clock AllocPeriod reads the period from: the
// database's clock. The default is time.Now.
func (m *Mem) SetNow(now func() time.Time) {
	m.mu.Lock()
	m.p.now = now
	m.mu.Unlock()
}

// CreatePeriodTag implements segstore.PeriodStore.
func (m *Mem) CreatePeriodTag(_ context.Context, t segstore.PeriodTag) error {
	if err := t.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.p.tags[t.Tag]; ok {
		return fmt.Errorf("segment tag %q: %w", t.Tag, segstore.ErrTagExists)
	}
	if m.p.tags == nil {
		m.p.tags, m.p.alloc = map[string]segstore.PeriodTag{}, map[[2]string]int64{}
	}
	m.p.tags[t.Tag] = t
	return nil
}

// PeriodTags implements segstore.PeriodStore.
func (m *Mem) PeriodTags(context.Context) ([]segstore.PeriodTag, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]segstore.PeriodTag, 0, len(m.p.tags))
	for _, t := range m.p.tags {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out, nil
}

// AllocPeriod implements segstore.PeriodStore.
func (m *Mem) AllocPeriod(_ context.Context, tag string, step int64) (segstore.PeriodRange, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.p.tags[tag]
	if !ok {
		return segstore.PeriodRange{}, segstore.AllocMiss(tag, false)
	}
	if step <= 0 {
		step = t.Step
	}
	now := time.Now()
	if m.p.now != nil {
		now = m.p.now()
	}
	key := [2]string{tag, t.Group.Key(now)}
	maxId, ok := m.p.alloc[key]
	if !ok {
		maxId = 1
	}
	if maxId > math.MaxInt64-step {
		return segstore.PeriodRange{}, segstore.AllocMiss(tag, true)
	}
	maxId += step
	m.p.alloc[key] = maxId
	return segstore.NewPeriodRange(t.Group, key[1], maxId, step, now)
}

// EditPeriod sets the max_id of tag's period as an UPDATE (or a restored
// backup, or a failover to a lagging standby) would, bypassing every
// check.
func (m *Mem) EditPeriod(tag, period string, maxId int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.p.alloc[[2]string{tag, period}] = maxId
}
