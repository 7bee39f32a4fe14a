package segtest

import (
	"context"
	"math"
	"sort"
	"sync"

	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Mem is an in-memory segstore.Store with the stores' allocation rule:
// max_id advances by the step in one step, and never past math.MaxInt64
// (segstore.ErrMaxIdOverflow). Edit lets a test change a row as an operator
// (or a broken store) would. It keeps period tags too
// (segstore.PeriodStore), on a clock a test sets (SetNow).
type Mem struct {
	mu   sync.Mutex
	rows map[string]segstore.TagInfo
	p    memPeriods
}

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{rows: map[string]segstore.TagInfo{}} }

// Init implements segstore.Store.
func (m *Mem) Init(context.Context) error { return nil }

// Tags implements segstore.Store.
func (m *Mem) Tags(context.Context) ([]segstore.TagInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]segstore.TagInfo, 0, len(m.rows))
	for _, r := range m.rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out, nil
}

// Alloc implements segstore.Store.
func (m *Mem) Alloc(_ context.Context, tag string, step int64) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[tag]
	if !ok {
		return 0, 0, segstore.AllocMiss(tag, false)
	}
	if step <= 0 {
		step = r.Step
	}
	if r.MaxId > math.MaxInt64-step {
		return 0, 0, segstore.AllocMiss(tag, true)
	}
	r.MaxId += step
	m.rows[tag] = r
	return r.MaxId, r.Step, nil
}

// CreateTag implements segstore.Store.
func (m *Mem) CreateTag(_ context.Context, t segstore.TagInfo) error {
	if err := t.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.rows[t.Tag]; ok {
		return segstore.ErrTagExists
	}
	m.rows[t.Tag] = t
	return nil
}

// Edit sets tag's max_id as an UPDATE would, bypassing every check.
func (m *Mem) Edit(tag string, maxId int64) {
	m.mu.Lock()
	r := m.rows[tag]
	r.MaxId = maxId
	m.rows[tag] = r
	m.mu.Unlock()
}

// Close implements segstore.Store.
func (m *Mem) Close() error { return nil }
