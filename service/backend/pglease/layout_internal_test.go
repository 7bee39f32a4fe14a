package pglease

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/pgtest"
)

// The layout swap keeps the Backend contract, as etcd's transaction does:
// a record is created only when none is expected, replaced only while it
// holds what was read, and the statement answers what the row holds then.
func TestSwapLayoutStatement(t *testing.T) {
	ctx := context.Background()
	dsn, err := pgtest.Shared(t).NewSchema(ctx)
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	sql := newStatements("vesta_machines")
	_, err = conn.Exec(ctx, sql.create)
	require.NoError(t, err)
	swap := func(old *string, rec string) (string, bool) {
		var s string
		err := conn.QueryRow(ctx, sql.swapLayout, "/p", old, rec).Scan(&s)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", false
		}
		require.NoError(t, err)
		return s, true
	}
	str := func(s string) *string { return &s }

	_, ok := swap(str("a"), "b")
	assert.False(t, ok, "a record expected but none: nothing stored")
	got, _ := swap(nil, "a")
	assert.Equal(t, "a", got, "none expected: created")
	got, _ = swap(nil, "b")
	assert.Equal(t, "a", got, "none expected but one is there: kept, and answered")
	got, _ = swap(str("a"), "c")
	assert.Equal(t, "c", got, "the record read: replaced")
	got, _ = swap(str("a"), "d")
	assert.Equal(t, "c", got, "a stale read: kept, and answered")
}
