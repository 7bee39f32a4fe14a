package segment

// SQL shared by the PostgreSQL and SQLite stores. Both accept $n
// placeholders, CURRENT_TIMESTAMP, ON CONFLICT and UPDATE ... RETURNING
// (SQLite 3.35+), so one text serves both.
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
