package pglease

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// SwapLayout sets the fleet's row of <table>_layout to rec if it holds old (nil:
// no row): one statement.
func (b *backend) SwapLayout(ctx context.Context, old, rec []byte) (cur []byte, err error) {
	if err := b.ensureTable(ctx); err != nil {
		return nil, err
	}
	var prev *string // nil: no row
	if old != nil {
		prev = new(string(old))
	}
	var s string
	switch err = b.pool.QueryRow(ctx, b.sql.swapLayout, b.o.Prefix, prev, string(rec)).Scan(&s); {
	case errors.Is(err, pgx.ErrNoRows): // no row, or one inserted after this statement's snapshot
		return nil, nil
	case err != nil:
		return nil, b.dbError(ctx, "reading the fleet's layout ("+b.where()+")", err)
	}
	return []byte(s), nil
}

func (b *backend) where() string { return "table " + b.o.Table + "_layout, row prefix " + b.o.Prefix }
