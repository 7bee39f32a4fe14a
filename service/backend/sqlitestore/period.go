package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/service/internal/segsql"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

var _ segstore.PeriodStore = (*Store)(nil)

// SetNow replaces the clock AllocPeriod reads the period from (a test's
// controllable clock); call it before the store is used. SQLite has no
// server and so no clock of its own: the period is the process's clock
// (time.Now, UTC) at the allocation, inside the BEGIN IMMEDIATE
// transaction that takes the range. Processes sharing one file share one
// host, and so one clock.
func (s *Store) SetNow(now func() time.Time) { s.now = now }

// CreatePeriodTag inserts a period tag, or returns segstore.ErrTagExists.
func (s *Store) CreatePeriodTag(ctx context.Context, t segstore.PeriodTag) error {
	if err := t.Validate(); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, segsql.CreatePeriodTagSQL, t.Tag, string(t.Group), t.Format, t.Step, t.Description)
	if err != nil {
		return fmt.Errorf("segment store sqlite: creating period tag %q: %w", t.Tag, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return fmt.Errorf("segment store sqlite: creating period tag %q: %w", t.Tag, err)
		}
		return fmt.Errorf("segment tag %q: %w", t.Tag, segstore.ErrTagExists)
	}
	return nil
}

// PeriodTags lists the period tags, ordered by tag.
func (s *Store) PeriodTags(ctx context.Context) ([]segstore.PeriodTag, error) {
	rows, err := s.db.QueryContext(ctx, segsql.PeriodTagsSQL)
	if err != nil {
		return nil, fmt.Errorf("segment store sqlite: listing period tags: %w", err)
	}
	defer rows.Close()
	var tags []segstore.PeriodTag
	for rows.Next() {
		var t segstore.PeriodTag
		if err := rows.Scan(&t.Tag, &t.Group, &t.Format, &t.Step, &t.Description); err != nil {
			return nil, fmt.Errorf("segment store sqlite: listing period tags: %w", err)
		}
		tags = append(tags, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segment store sqlite: listing period tags: %w", err)
	}
	return tags, nil
}

// AllocPeriod takes a range of the tag's current period (the process's
// clock: SetNow) in one BEGIN IMMEDIATE transaction.
func (s *Store) AllocPeriod(ctx context.Context, tag string, step int64) (segstore.PeriodRange, error) {
	fail := func(err error) (segstore.PeriodRange, error) {
		return segstore.PeriodRange{}, fmt.Errorf("segment store sqlite: allocating for period tag %q: %w", tag, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var (
		group  segstore.Grouping
		dbStep int64
	)
	err = tx.QueryRowContext(ctx, segsql.PeriodTagSQL, tag).Scan(&group, &dbStep)
	if errors.Is(err, sql.ErrNoRows) {
		return segstore.PeriodRange{}, segstore.AllocMiss(tag, false)
	}
	if err != nil {
		return fail(err)
	}
	if step <= 0 {
		step = dbStep
	}
	now := s.now().UTC() // within the write lock: allocations are ordered as their clock readings
	period := group.Key(now)
	var maxId int64
	err = tx.QueryRowContext(ctx, segsql.PeriodUpsertSQL, tag, period, step).Scan(&maxId)
	if errors.Is(err, sql.ErrNoRows) {
		return segstore.PeriodRange{}, segstore.AllocMiss(tag, true)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fail(err)
	}
	return segstore.NewPeriodRange(group, period, maxId, step, now)
}
