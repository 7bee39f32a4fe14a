package stores

import (
	"context"

	"github.com/vesta-go/vesta/service/segment/segstore"
)

var _ segstore.PeriodStore = (*onDemandStore)(nil)

// CreatePeriodTag creates the file if needed, then the period tag.
func (s *onDemandStore) CreatePeriodTag(ctx context.Context, t segstore.PeriodTag) error {
	if err := t.Validate(); err != nil { // a bad tag creates no file
		return err
	}
	st, err := s.store(ctx, true)
	if err != nil {
		return err
	}
	return st.CreatePeriodTag(ctx, t)
}

// PeriodTags lists the file's period tags; none while there is no file.
func (s *onDemandStore) PeriodTags(ctx context.Context) ([]segstore.PeriodTag, error) {
	st, err := s.store(ctx, false)
	if st == nil {
		return nil, err
	}
	return st.PeriodTags(ctx)
}

// AllocPeriod allocates in the file; while there is none, no tag exists.
func (s *onDemandStore) AllocPeriod(ctx context.Context, tag string, step int64) (segstore.PeriodRange, error) {
	st, err := s.store(ctx, false)
	if err != nil {
		return segstore.PeriodRange{}, err
	}
	if st == nil {
		return segstore.PeriodRange{}, segstore.AllocMiss(tag, false)
	}
	return st.AllocPeriod(ctx, tag, step)
}
