package segtest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/vesta-go/vesta/service/segment/segstore"
)

// ErrDown is the error of a Store told to fail.
var ErrDown = errors.New("segtest: store down")

// Alloc records one successful Store.Alloc call.
type Alloc struct {
	Asked, MaxId, DBStep int64
}

// Store wraps a segstore.Store: it counts and records allocations, and while
// Down is set every call fails with ErrDown, as a database that stopped.
type Store struct {
	segstore.Store
	down   atomic.Bool
	calls  atomic.Int64
	reads  atomic.Int64
	preads atomic.Int64
	mu     sync.Mutex
	allocs []Alloc
}

// Wrap wraps st.
func Wrap(st segstore.Store) *Store { return &Store{Store: st} }

// SetDown makes every call fail (true) or pass through again (false).
func (s *Store) SetDown(down bool) { s.down.Store(down) }

// Calls counts Alloc calls, failed ones included: database round trips.
func (s *Store) Calls() int64 { return s.calls.Load() }

// TagReads counts Tags calls, failed ones included: rereads of the tag
// list.
func (s *Store) TagReads() int64 { return s.reads.Load() }

// PeriodTagReads counts PeriodTags calls, failed ones included: rereads
// of the period tags.
func (s *Store) PeriodTagReads() int64 { return s.preads.Load() }

// Allocs returns the successful allocations, in order.
func (s *Store) Allocs() []Alloc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Alloc(nil), s.allocs...)
}

// Alloc implements segstore.Store.
func (s *Store) Alloc(ctx context.Context, tag string, step int64) (int64, int64, error) {
	s.calls.Add(1)
	if s.down.Load() {
		return 0, 0, ErrDown
	}
	maxId, dbStep, err := s.Store.Alloc(ctx, tag, step)
	if err == nil {
		s.mu.Lock()
		s.allocs = append(s.allocs, Alloc{Asked: step, MaxId: maxId, DBStep: dbStep})
		s.mu.Unlock()
	}
	return maxId, dbStep, err
}

// Tags implements segstore.Store.
func (s *Store) Tags(ctx context.Context) ([]segstore.TagInfo, error) {
	s.reads.Add(1)
	if s.down.Load() {
		return nil, ErrDown
	}
	return s.Store.Tags(ctx)
}

// CreateTag implements segstore.Store.
func (s *Store) CreateTag(ctx context.Context, t segstore.TagInfo) error {
	if s.down.Load() {
		return ErrDown
	}
	return s.Store.CreateTag(ctx, t)
}

// Applied is the number of IDs the allocation took.
func (a Alloc) Applied() int64 {
	if a.Asked > 0 {
		return a.Asked
	}
	return a.DBStep
}

// CreatePeriodTag implements segstore.PeriodStore on the wrapped store's.
func (s *Store) CreatePeriodTag(ctx context.Context, t segstore.PeriodTag) error {
	ps, err := segstore.PeriodStoreOf(s.Store)
	if err != nil {
		return err
	}
	if s.down.Load() {
		return ErrDown
	}
	return ps.CreatePeriodTag(ctx, t)
}

// PeriodTags implements segstore.PeriodStore on the wrapped store's,
// counted with PeriodTagReads.
func (s *Store) PeriodTags(ctx context.Context) ([]segstore.PeriodTag, error) {
	ps, err := segstore.PeriodStoreOf(s.Store)
	if err != nil {
		return nil, err
	}
	s.preads.Add(1)
	if s.down.Load() {
		return nil, ErrDown
	}
	return ps.PeriodTags(ctx)
}

// AllocPeriod implements segstore.PeriodStore on the wrapped store's,
// counted with Calls.
func (s *Store) AllocPeriod(ctx context.Context, tag string, step int64) (segstore.PeriodRange, error) {
	ps, err := segstore.PeriodStoreOf(s.Store)
	if err != nil {
		return segstore.PeriodRange{}, err
	}
	s.calls.Add(1)
	if s.down.Load() {
		return segstore.PeriodRange{}, ErrDown
	}
	return ps.AllocPeriod(ctx, tag, step)
}
