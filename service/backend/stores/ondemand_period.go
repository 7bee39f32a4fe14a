package stores

import (
	"context"

	"github.com/vesta-go/vesta/service/segment"
)

var _ segment.PeriodStore = (*onDemandStore)(nil)

// CreatePeriodTag creates the file if needed, then the period tag.
func (s *onDemandStore) CreatePeriodTag(ctx context.Context, t segment.PeriodTag) error {
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
func (s *onDemandStore) PeriodTags(ctx context.Context) ([]segment.PeriodTag, error) {
	st, err := s.store(ctx, false)
	if st == nil {
		return nil, err
	}
	return st.PeriodTags(ctx)
}

// AllocPeriod allocates in the file; while there is none, no tag exists.
func (s *onDemandStore) AllocPeriod(ctx context.Context, tag string, step int64) (segment.PeriodRange, error) {
	st, err := s.store(ctx, false)
	if err != nil {
		return segment.PeriodRange{}, err
	}
	if st == nil {
		return segment.PeriodRange{}, segment.AllocMiss(tag, false)
	}
	return st.AllocPeriod(ctx, tag, step)
}
