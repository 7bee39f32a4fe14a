package segstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// PeriodStore is what a Store implements to keep period tags: tags whose
// numbers restart at 1 each period (day, month, year) and are served
// formatted (Generator.NextNumber). It is optional: a Store without it
// serves no period tags. Its tables, created by the store's Init beside
// leaf_alloc (which they leave untouched):
//
//	vesta_period_tags(biz_tag PRIMARY KEY, period_unit, format, step, description, create_time)
//	vesta_period_alloc(biz_tag, period, max_id, update_time, PRIMARY KEY (biz_tag, period))
//
// A vesta_period_alloc row is one tag's period: max_id is the next number
// of it no generator holds yet, as leaf_alloc's.
type PeriodStore interface {
	// CreatePeriodTag inserts a period tag; ErrTagExists when it is
	// there (the row is left as it is).
	CreatePeriodTag(ctx context.Context, t PeriodTag) error
	// PeriodTags lists the period tags, ordered by tag.
	PeriodTags(ctx context.Context) ([]PeriodTag, error)
	// AllocPeriod takes step numbers (the tag's step when step <= 0) of
	// the tag's current period in one atomic statement, the period read
	// from the database's clock at that statement (PostgreSQL: now(); a
	// store without a clock of its own documents which it reads). The
	// first range of a period starts at 1. Errors: intf.ErrUnknownTag,
	// ErrMaxIdOverflow.
	AllocPeriod(ctx context.Context, tag string, step int64) (PeriodRange, error)
}

// PeriodTag is one vesta_period_tags row.
type PeriodTag struct {
	Tag    string
	Group  Grouping
	Format string
	// Step is how many numbers one allocation takes.
	Step        int64
	Description string
}

// DefaultPeriodStep is a new period tag's step: business numbers are
// not a hot path, and a restart skips at most a range.
const DefaultPeriodStep = 100

// Validate checks a period tag before it is created, naming the first bad
// field: the tag, the group, the format (ParseFormat), the step
// (1..segspec.MaxDBStep) and the description.
func (t PeriodTag) Validate() error {
	if err := intf.CheckTag(t.Tag); err != nil {
		return err
	}
	if _, err := ParseGrouping(string(t.Group)); err != nil {
		return err
	}
	if _, err := ParseFormat(t.Format, t.Group); err != nil {
		return err
	}
	if err := intf.CheckRange("step", t.Step, 1, segspec.MaxDBStep); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(t.Description); n > MaxDescriptionLen {
		return fmt.Errorf("%w: description: %d characters, at most %d", intf.ErrInvalidArgument, n, MaxDescriptionLen)
	}
	return nil
}

// PeriodRange is a range of one period's numbers, [Start, End), handed
// out by AllocPeriod.
type PeriodRange struct {
	// Period is the period's key: "20261127", "202611" or "2026".
	Period     string
	Start, End int64
	// DBNow is the database's time (UTC) of the allocation, from which
	// the period was read; PeriodEnd the period's end (UTC).
	DBNow, PeriodEnd time.Time
}

// NewPeriodRange builds the range a store's allocation returned: the
// period of dbNow in group g, and [maxId-step, maxId).
func NewPeriodRange(g Grouping, period string, maxId, step int64, dbNow time.Time) (PeriodRange, error) {
	end, err := g.End(period)
	if err != nil {
		return PeriodRange{}, err
	}
	return PeriodRange{Period: period, Start: maxId - step, End: maxId, DBNow: dbNow.UTC(), PeriodEnd: end}, nil
}

// ErrNoPeriods: the store keeps no period tags (it does not implement
// PeriodStore).
var ErrNoPeriods = errors.New("the segment store keeps no period tags")

// PeriodStoreOf returns st's PeriodStore, or ErrNoPeriods.
func PeriodStoreOf(st Store) (PeriodStore, error) {
	if ps, ok := st.(PeriodStore); ok {
		return ps, nil
	}
	return nil, fmt.Errorf("%w (%T)", ErrNoPeriods, st)
}
