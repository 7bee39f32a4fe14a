// Package segsql is the SQL of the segment stores, shared by the
// PostgreSQL and SQLite stores. Both accept $n
// placeholders, CURRENT_TIMESTAMP, ON CONFLICT and UPDATE ... RETURNING
// (SQLite 3.35+), so one text serves both.
package segsql

const (
	// SchemaSQL creates the table (Leaf's, with defaults).
	SchemaSQL = `CREATE TABLE IF NOT EXISTS leaf_alloc (
	biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
	max_id      BIGINT       NOT NULL DEFAULT 1,
	step        INT          NOT NULL,
	description VARCHAR(256) NOT NULL DEFAULT '',
	update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
)`

	// TagsSQL lists the rows; description and update_time may be NULL in
	// a table Leaf created.
	TagsSQL = `SELECT biz_tag, max_id, step, COALESCE(description, ''), update_time FROM leaf_alloc ORDER BY biz_tag`

	// CreateTagSQL inserts a row unless the tag exists: $1 tag, $2 max_id,
	// $3 step, $4 description. No row affected means ErrTagExists.
	CreateTagSQL = `INSERT INTO leaf_alloc (biz_tag, max_id, step, description, update_time)
VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP) ON CONFLICT (biz_tag) DO NOTHING`

	// ExistsSQL tells an unknown tag from an overflow after an Alloc
	// that updated nothing.
	ExistsSQL = `SELECT COUNT(*) FROM leaf_alloc WHERE biz_tag = $1`

	// allocDBStepSQL advances max_id by the row's step: $1 tag.
	allocDBStepSQL = `UPDATE leaf_alloc SET max_id = max_id + step, update_time = CURRENT_TIMESTAMP
WHERE biz_tag = $1 AND max_id <= 9223372036854775807 - step
RETURNING max_id, step`

	// allocStepSQL advances max_id by $2.
	allocStepSQL = `UPDATE leaf_alloc SET max_id = max_id + CAST($2 AS BIGINT), update_time = CURRENT_TIMESTAMP
WHERE biz_tag = $1 AND max_id <= 9223372036854775807 - CAST($2 AS BIGINT)
RETURNING max_id, step`
)

// AllocQuery returns the statement and arguments of Store.Alloc: the row's
// own step when step <= 0, else step. The statement returns (max_id, step)
// of the updated row, or no row (see AllocMiss).
func AllocQuery(tag string, step int64) (string, []any) {
	if step <= 0 {
		return allocDBStepSQL, []any{tag}
	}
	return allocStepSQL, []any{tag, step}
}

// SQL of the period tags (PeriodStore), shared by the stores. The
// allocation itself is each store's: PostgreSQL reads the period from
// its own clock in the statement, SQLite from the process's.
var (
	// PeriodSchemaSQL creates the two tables, one statement each.
	PeriodSchemaSQL = []string{`CREATE TABLE IF NOT EXISTS vesta_period_tags (
	biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
	period_unit VARCHAR(8)   NOT NULL,
	format      VARCHAR(128) NOT NULL,
	step        INT          NOT NULL,
	description VARCHAR(256) NOT NULL DEFAULT '',
	create_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
)`, `CREATE TABLE IF NOT EXISTS vesta_period_alloc (
	biz_tag     VARCHAR(128) NOT NULL,
	period      VARCHAR(8)   NOT NULL,
	max_id      BIGINT       NOT NULL,
	update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
	PRIMARY KEY (biz_tag, period)
)`}
)

const (
	// CreatePeriodTagSQL inserts a period tag unless it exists: $1 tag,
	// $2 period_unit, $3 format, $4 step, $5 description.
	CreatePeriodTagSQL = `INSERT INTO vesta_period_tags (biz_tag, period_unit, format, step, description)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (biz_tag) DO NOTHING`

	// PeriodTagsSQL lists the period tags.
	PeriodTagsSQL = `SELECT biz_tag, period_unit, format, step, description FROM vesta_period_tags ORDER BY biz_tag`

	// PeriodTagSQL reads one period tag's grouping and step: $1 tag.
	PeriodTagSQL = `SELECT period_unit, step FROM vesta_period_tags WHERE biz_tag = $1`

	// PeriodUpsertSQL takes $3 numbers of period $2 of tag $1: the
	// period's row is created at 1 + $3 (the range [1, 1 + $3)) or
	// advanced by $3; it returns the new max_id, or no row when that
	// would pass math.MaxInt64.
	PeriodUpsertSQL = `INSERT INTO vesta_period_alloc (biz_tag, period, max_id, update_time)
VALUES ($1, $2, 1 + CAST($3 AS BIGINT), CURRENT_TIMESTAMP)
ON CONFLICT (biz_tag, period) DO UPDATE SET max_id = vesta_period_alloc.max_id + CAST($3 AS BIGINT), update_time = CURRENT_TIMESTAMP
WHERE vesta_period_alloc.max_id <= 9223372036854775807 - CAST($3 AS BIGINT)
RETURNING max_id`
)
