package pglease

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// statements are the lease's SQL for one table. Every write of a holder
// names its token, so that a node whose id was taken over changes
// nothing; every expiry is the database's now().
type statements struct {
	table                                           string // quoted
	create, claim, renew, storeMark, release, clock string
}

func newStatements(table string) statements {
	t := pgx.Identifier(strings.Split(table, ".")).Sanitize()
	return statements{
		table: t,
		create: `CREATE TABLE IF NOT EXISTS ` + t + ` (
	prefix     text        NOT NULL,
	machine    integer     NOT NULL CHECK (machine BETWEEN 0 AND 1023),
	holder     text        NOT NULL,
	token      bigint      NOT NULL,
	expires_at timestamptz NOT NULL,
	mark_ms    bigint      NOT NULL DEFAULT 0 CHECK (mark_ms >= 0),
	PRIMARY KEY (prefix, machine))`,
		// Take $2 when free or lapsed, with the new token $4; when it is
		// held, list the live ids instead (the same round trip). Of two
		// claims of one id the second waits for the first's row lock and
		// then finds it live.
		claim: `WITH claimed AS (
	INSERT INTO ` + t + ` AS m (prefix, machine, holder, token, expires_at, mark_ms)
	VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', 0)
	ON CONFLICT (prefix, machine) DO UPDATE
		SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at
		WHERE m.expires_at < now()
	RETURNING m.mark_ms)
SELECT (SELECT mark_ms FROM claimed),
	(SELECT coalesce(array_agg(machine), '{}') FROM ` + t + `
		WHERE prefix = $1 AND expires_at >= now() AND NOT EXISTS (SELECT 1 FROM claimed))`,
		// A row still carrying our token was never taken over since our
		// claim (every claim writes a new token), lapsed or not: renewing
		// it leaves one holder.
		renew: `UPDATE ` + t + ` SET expires_at = now() + $4 * interval '1 millisecond', holder = $5
	WHERE prefix = $1 AND machine = $2 AND token = $3 RETURNING mark_ms`,
		storeMark: `UPDATE ` + t + ` SET mark_ms = $4, holder = $5 WHERE prefix = $1 AND machine = $2 AND token = $3`,
		release:   `UPDATE ` + t + ` SET expires_at = '-infinity' WHERE prefix = $1 AND machine = $2 AND token = $3`,
		clock:     `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`,
	}
}

// ensureTable creates the table unless it exists. A table that exists
// (created by a DBA) needs no CREATE privilege; nodes creating it at once
// take turns on an advisory lock, as concurrent CREATE TABLE IF NOT
// EXISTS statements can fail on each other.
func (l *Lease) ensureTable(ctx context.Context) error {
	if l.tableReady.Load() {
		return nil
	}
	cctx, cancel := l.timeout(ctx)
	defer cancel()
	err := pgx.BeginFunc(cctx, l.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(cctx, `SELECT to_regclass($1) IS NOT NULL`, l.sql.table).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(cctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "vesta-go pglease "+l.sql.table); err != nil {
			return err
		}
		_, err := tx.Exec(cctx, l.sql.create)
		return err
	})
	if err != nil {
		return l.dbError(cctx, "creating the table "+l.o.Table+" (grant CREATE on its schema, or create it as docs/operations.md shows)", err)
	}
	l.tableReady.Store(true)
	return nil
}

// errTimedOut is the cause of a statement whose own timeout expired.
var errTimedOut = errors.New("PostgreSQL statement timed out")

// timeout bounds one statement by the dial timeout.
func (l *Lease) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, l.o.DialTimeout, errTimedOut)
}

// dbError wraps the failure of a statement made with ctx, naming the
// server (never the password) and what was being done; one that says the
// server cannot be reached now matches intf.ErrUnavailable (unreachable).
func (l *Lease) dbError(ctx context.Context, doing string, err error) error {
	hint := ""
	if errors.Is(context.Cause(ctx), errTimedOut) || errors.Is(err, errTimedOut) {
		hint = fmt.Sprintf(" (no answer within the dial timeout %s)", l.o.DialTimeout)
	}
	err = fmt.Errorf("pglease: PostgreSQL %s: %s%s: %w", l.server, doing, hint, err)
	if unreachable(err) {
		return unreachableError{err}
	}
	return err
}
