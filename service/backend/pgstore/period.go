package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/internal/segsql"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

var _ segstore.PeriodStore = (*Store)(nil)

// allocPeriodSQL takes a range of the tag's current period in one
// statement, the period read from the database's clock (%s: Options.NowSQL,
// now() by default) in UTC: $1 tag, $2 step (<= 0: the tag's). It returns
// the period, the new max_id, the step applied and the clock's reading;
// no row for an unknown tag or a max_id that would overflow.
const allocPeriodSQL = `WITH c AS (SELECT (%s) AT TIME ZONE 'UTC' AS now),
t AS (
	SELECT biz_tag, period_unit,
		CASE WHEN CAST($2 AS BIGINT) > 0 THEN CAST($2 AS BIGINT) ELSE CAST(step AS BIGINT) END AS n,
		to_char((SELECT now FROM c), CASE period_unit WHEN 'day' THEN 'YYYYMMDD' WHEN 'month' THEN 'YYYYMM' ELSE 'YYYY' END) AS period
	FROM vesta_period_tags WHERE biz_tag = $1
)
INSERT INTO vesta_period_alloc AS a (biz_tag, period, max_id, update_time)
SELECT biz_tag, period, 1 + n, (SELECT now FROM c) FROM t
ON CONFLICT (biz_tag, period) DO UPDATE SET max_id = a.max_id + EXCLUDED.max_id - 1, update_time = EXCLUDED.update_time
WHERE a.max_id <= 9223372036854775807 - (EXCLUDED.max_id - 1)
RETURNING a.period, a.max_id, (SELECT n FROM t), (SELECT now FROM c), (SELECT period_unit FROM t)`

// CreatePeriodTag inserts a period tag, or returns segstore.ErrTagExists.
func (s *Store) CreatePeriodTag(ctx context.Context, t segstore.PeriodTag) error {
	if err := t.Validate(); err != nil {
		return err
	}
	ct, err := s.pool.Exec(ctx, segsql.CreatePeriodTagSQL, t.Tag, string(t.Group), t.Format, t.Step, t.Description)
	if err != nil {
		return dbError(fmt.Sprintf("creating period tag %q", t.Tag), err)
	}
	if ct.RowsAffected() == 0 {
		return fmt.Errorf("segment tag %q: %w", t.Tag, segstore.ErrTagExists)
	}
	return nil
}

// PeriodTags lists the period tags, ordered by tag.
func (s *Store) PeriodTags(ctx context.Context) ([]segstore.PeriodTag, error) {
	rows, err := s.pool.Query(ctx, segsql.PeriodTagsSQL)
	if err != nil {
		return nil, dbError("listing period tags", err)
	}
	tags, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (segstore.PeriodTag, error) {
		var t segstore.PeriodTag
		var group string
		err := r.Scan(&t.Tag, &group, &t.Format, &t.Step, &t.Description)
		t.Group = segstore.Grouping(group)
		return t, err
	})
	if err != nil {
		return nil, dbError("listing period tags", err)
	}
	return tags, nil
}

// AllocPeriod takes a range of the tag's current period with one INSERT
// ... ON CONFLICT DO UPDATE ... RETURNING that reads the period from the
// database's clock (now(), the transaction's start, in UTC; Options.NowSQL
// replaces it), checked as Alloc is.
func (s *Store) AllocPeriod(ctx context.Context, tag string, step int64) (segstore.PeriodRange, error) {
	var (
		r             segstore.PeriodRange
		period, group string
		maxId, n      int64
		now           time.Time
	)
	err := s.allocate(ctx, tag, func(conn *pgxpool.Conn) error {
		q := fmt.Sprintf(allocPeriodSQL, cmp.Or(s.o.NowSQL, "now()"))
		err := conn.QueryRow(ctx, q, tag, step).Scan(&period, &maxId, &n, &now, &group)
		if errors.Is(err, pgx.ErrNoRows) {
			var found int64
			if err = conn.QueryRow(ctx, `SELECT COUNT(*) FROM vesta_period_tags WHERE biz_tag = $1`, tag).Scan(&found); err == nil {
				return segstore.AllocMiss(tag, found > 0)
			}
		}
		if err != nil {
			return dbError(fmt.Sprintf("allocating for period tag %q", tag), err)
		}
		r, err = segstore.NewPeriodRange(segstore.Grouping(group), period, maxId, n, now)
		return err
	})
	return r, err
}
