package pglease

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// statements are the lease's SQL for one table. Every write of a holder
// names its token, so that a node whose id was taken over changes
// nothing; every expiry is the database's now(). Marks are kept twice: in
// the claim row (which a takeover reads under the row's lock) and in
// <table>_marks, which no statement of ours deletes, so that they
// survive the loss of a claim row.
type statements struct {
	table, marks                                                string // quoted
	create, claim, renew, held, storeMark, release, clock, copy string
}

func newStatements(table string) statements {
	t := pgx.Identifier(strings.Split(table, ".")).Sanitize()
	mk := pgx.Identifier(strings.Split(table+"_marks", ".")).Sanitize()
	return statements{
		table: t, marks: mk,
		create: `CREATE TABLE IF NOT EXISTS ` + t + ` (
	prefix     text        NOT NULL,
	machine    integer     NOT NULL CHECK (machine BETWEEN 0 AND 1023),
	holder     text        NOT NULL,
	token      bigint      NOT NULL,
	expires_at timestamptz NOT NULL,
	mark_ms    bigint      NOT NULL DEFAULT 0 CHECK (mark_ms >= 0),
	PRIMARY KEY (prefix, machine));
CREATE TABLE IF NOT EXISTS ` + mk + ` (
	prefix  text    NOT NULL,
	machine integer NOT NULL CHECK (machine BETWEEN 0 AND 1023),
	mark_ms bigint  NOT NULL CHECK (mark_ms >= 0),
	PRIMARY KEY (prefix, machine))`,
		// The marks of a table made by an earlier version.
		copy: `INSERT INTO ` + mk + ` SELECT prefix, machine, mark_ms FROM ` + t + ` WHERE mark_ms > 0 ON CONFLICT DO NOTHING`,
		// Take $2 when free or lapsed, with the new token $4; when it is
		// held, list the live ids instead (the same round trip). Of two
		// claims of one id the second waits for the first's row lock and
		// then finds it live. existed: the id had a claim row (xmax is set
		// on the row an ON CONFLICT updates).
		claim: `WITH claimed AS (
	INSERT INTO ` + t + ` AS m (prefix, machine, holder, token, expires_at, mark_ms)
	VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', 0)
	ON CONFLICT (prefix, machine) DO UPDATE
		SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at
		WHERE m.expires_at < now()
	RETURNING m.mark_ms, m.xmax <> 0 AS existed)
SELECT (SELECT existed FROM claimed), (SELECT mark_ms FROM claimed),
	(SELECT mark_ms FROM ` + mk + ` WHERE prefix = $1 AND machine = $2),
	(SELECT coalesce(array_agg(machine), '{}') FROM ` + t + `
		WHERE prefix = $1 AND expires_at >= now() AND NOT EXISTS (SELECT 1 FROM claimed))`,
		// A row still carrying our token was never taken over since our
		// claim (every claim writes a new token), lapsed or not: renewing
		// it leaves one holder.
		renew: `UPDATE ` + t + ` SET expires_at = now() + $4 * interval '1 millisecond', holder = $5
	WHERE prefix = $1 AND machine = $2 AND token = $3`,
		held: `SELECT greatest(c.mark_ms, (SELECT mark_ms FROM ` + mk + ` WHERE prefix = $1 AND machine = $2))
	FROM ` + t + ` c WHERE prefix = $1 AND machine = $2 AND token = $3`,
		storeMark: `WITH held AS (UPDATE ` + t + ` SET mark_ms = $4, holder = $5 WHERE prefix = $1 AND machine = $2 AND token = $3 RETURNING 1)
INSERT INTO ` + mk + ` (prefix, machine, mark_ms) SELECT $1, $2, $4 FROM held
ON CONFLICT (prefix, machine) DO UPDATE SET mark_ms = excluded.mark_ms`,
		release: `UPDATE ` + t + ` SET expires_at = '-infinity' WHERE prefix = $1 AND machine = $2 AND token = $3`,
		clock:   `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`,
	}
}

// ensureTable creates the tables unless they exist. Tables a DBA made
// need no CREATE privilege; nodes creating them at once take turns on an
// advisory lock, as concurrent CREATE TABLE IF NOT EXISTS statements can
// fail on each other. A claims table of an earlier version gets its marks
// table, with its marks copied.
func (l *Lease) ensureTable(ctx context.Context) error {
	if l.tableReady {
		return nil
	}
	cctx, cancel := leasekit.Timeout(ctx, l.o.DialTimeout)
	defer cancel()
	err := pgx.BeginFunc(cctx, l.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(cctx, `SELECT to_regclass($1) IS NOT NULL`, l.sql.marks).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(cctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "vesta-go pglease "+l.sql.table); err != nil {
			return err
		}
		_, err := tx.Exec(cctx, l.sql.create+`; `+l.sql.copy)
		return err
	})
	l.tableReady = err == nil
	return l.dbError(cctx, "creating the tables "+l.o.Table+" and "+l.o.Table+"_marks (grant CREATE on their schema, or create them as docs/operations.md shows)", err)
}

// dbError wraps the failure (nil: none) of a statement made with ctx,
// naming the server (never the password) and what was being done. One
// that says the server cannot be reached now — a network error, a
// timeout, a failed connection, a connection exception (SQLSTATE 08) or
// a shutdown (57P01..03), not a refusal such as a missing table or a
// permission taken away — is a leasekit.UnreachableError: only then does
// a restart resume its claim without the database.
func (l *Lease) dbError(ctx context.Context, doing string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("pglease: PostgreSQL %s: %s%s: %w", l.server, doing, leasekit.TimedOut(ctx, err, l.o.DialTimeout), err)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" {
			return leasekit.UnreachableError{Err: err}
		}
		return err
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, context.DeadlineExceeded) || leasekit.TimedOut(ctx, err, 0) != "" {
		return leasekit.UnreachableError{Err: err}
	}
	return err
}
