// Package pglease leases Vesta machine ids (0..1023) from PostgreSQL, for
// teams that run it and no etcd: it is the PostgreSQL backend of the lease
// engine etcdlease uses too, and implements service.MachineLease.
//
// A claim is a row of Options.Table carrying a random fencing token, which
// every later write names: one statement inserts the row of a free id, or
// takes over one whose expires_at < now() (the database's clock decides;
// row locks let one of two claims win). The marks live apart too, in
// <table>_marks, which nothing deletes. A DSN naming several servers must
// replicate synchronously unless AllowAsyncFailover. See docs/operations.md.
package pglease

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/internal/leasekit"
	"github.com/vesta-go/vesta/service/internal/pgrepl"
)

// Defaults, errors and error types: the lease engine's, shared with etcdlease.
const (
	DefaultTable        = leasekit.DefaultTable
	DefaultPrefix       = leasekit.DefaultPrefix
	DefaultTTL          = leasekit.DefaultTTL
	DefaultDialTimeout  = leasekit.DefaultDialTimeout
	DefaultMaxClockSkew = leasekit.DefaultMaxClockSkew
)

var (
	ErrAllTaken = leasekit.ErrAllTaken // every id of the range is held (matches intf.ErrUnavailable)
	ErrNotHeld  = leasekit.ErrNotHeld  // the row carries another token (matches intf.ErrFenced)
	ErrRunning  = leasekit.ErrRunning  // Run was called on a Lease that runs already
)

type (
	OptionError     = leasekit.OptionError     // names the wrong Options field
	MarksAheadError = leasekit.MarksAheadError // ids given back for marks too far ahead
	ClockSkewError  = leasekit.ClockSkewError  // this clock is off the server's by more than MaxClockSkew
	Range           = leasekit.Range           // machine ids First..Last
)

// Options configures a Lease. Only DSN is required; a zero field takes its
// default. New validates them.
type Options struct {
	DSN          string        // a URL (postgres://user:password@host:5432/db) or key=value pairs; nothing here shows its password
	Table        string        // of the claims, maybe schema.table (default vesta_machines; marks in <Table>_marks), created when missing
	Prefix       string        // names the fleet (default /vesta): nodes that must not share a machine id share it
	TTL          time.Duration // of a claim, whole seconds from 2s (default 1m), as etcdlease.Options.TTL
	DialTimeout  time.Duration // bounds connecting and every statement (default 5s)
	NodeName     string        // written in the holder column (default hostname-pid)
	MaxClockSkew time.Duration // how far this clock may be off the server's before it claims no id (default 1s)
	MachineRange *Range        // limits the ids this fleet claims (nil: all, 0-1023)
	// AllowAsyncFailover accepts a DSN naming several servers whose primary
	// does not replicate synchronously, though a failover could lose claims
	// and marks and hand an id out twice (else refused at every connection).
	AllowAsyncFailover bool
	Logger             *slog.Logger // the lease's transitions; nil: slog.Default()

	lowestFirst bool // claim the lowest free id (tests)
}

var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,56}$`)

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the DSN is parsed, not dialled).
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields, validates them and parses the DSN (when
// dialing: no pool given).
func (o Options) withDefaults(dialing bool) (Options, *pgxpool.Config, error) {
	o.Table = cmp.Or(o.Table, DefaultTable)
	cfg, err := ParseDSN(o.DSN)
	var dsn *OptionError
	if dialing && err != nil {
		dsn = &OptionError{Option: "DSN", Value: "(not shown: it may hold a password)", Want: "a PostgreSQL URL or key=value DSN", Err: err}
	}
	check := leasekit.Check
	err = leasekit.Common("pglease", &o.Prefix, &o.TTL, &o.DialTimeout, &o.MaxClockSkew, &o.NodeName, o.MachineRange, &o.Logger,
		func() []*OptionError {
			return []*OptionError{dsn,
				check(tableName.MatchString(o.Table), "Table", o.Table, "a table name, optionally schema.table, of letters, digits and _ (at most 57: its marks are in <table>_marks)"),
				check(len(o.Prefix) <= 200, "Prefix", o.Prefix, "a fleet name of 1..200 bytes, such as /vesta"),
				check(len(o.NodeName) <= 200 && !strings.ContainsAny(o.NodeName, "\n\r\x00"), "NodeName", o.NodeName, "a name of 1..200 bytes on one line")}
		})
	return o, cfg, err
}

// ParseDSN checks a PostgreSQL DSN without connecting. Its error never
// repeats the password (pgx masks it).
func ParseDSN(dsn string) (*pgxpool.Config, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, fmt.Errorf("empty DSN")
	}
	return pgxpool.ParseConfig(dsn)
}

// Lease leases a machine id from a PostgreSQL table for one service: the
// lease engine etcdlease shares, over this package's backend.
type Lease struct {
	*leasekit.Engine
	o          Options
	cfg        *pgxpool.Config
	given      *pgxpool.Pool // the caller's pool (NewWithPool), never closed here
	pool       *pgxpool.Pool // set by Run
	server     string        // host:port/database, for logs and errors (never the password)
	sql        statements
	repl       *pgrepl.Policy // the replication check the segment store makes too
	now        func() int64   // the service clock, set by Run
	tableReady bool           // under the engine's one claiming goroutine
}

// New validates o (an *OptionError names the wrong field) and parses the
// DSN. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) {
	o, cfg, err := o.withDefaults(true)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.ConnectTimeout = cmp.Or(cfg.ConnConfig.ConnectTimeout, o.DialTimeout)
	cfg.MaxConns = 4 // a renewal, a check, a mark store and a release at once at most
	l := newLease(o, cfg, nil)
	cfg.AfterConnect = l.repl.Check // a failover to an unsafe primary is refused too
	return l, nil
}

// NewWithPool is New for a pool the caller made, which Run never closes.
// o.DSN is not used.
func NewWithPool(pool *pgxpool.Pool, o Options) (*Lease, error) {
	if pool == nil {
		return nil, &OptionError{Provider: "pglease", Option: "pool", Want: "a *pgxpool.Pool"}
	}
	o, _, err := o.withDefaults(false)
	if err != nil {
		return nil, err
	}
	return newLease(o, pool.Config(), pool), nil
}

func newLease(o Options, cfg *pgxpool.Config, pool *pgxpool.Pool) *Lease {
	cc := cfg.ConnConfig
	l := &Lease{o: o, cfg: cfg, given: pool, server: fmt.Sprintf("%s:%d/%s", cc.Host, cc.Port, cc.Database), sql: newStatements(o.Table)}
	l.repl = &pgrepl.Policy{Who: "pglease", DSNKey: "machineDSN", AllowKey: "machineAllowAsyncFailover", Does: "claim machine ids",
		Lost: "A claim or a mark stored just before a failover", Hosts: len(pgrepl.Servers(&cc.Config)), Allow: o.AllowAsyncFailover, Logger: o.Logger}
	l.Engine = leasekit.NewEngine(leasekit.Config{
		Provider: "pglease", Coordinator: "PostgreSQL", Marks: "the table " + o.Table + "_marks", Claims: "fleet " + o.Prefix + " in " + o.Table,
		Endpoints: "postgres://" + l.server + "?table=" + o.Table, Prefix: o.Prefix, NodeName: o.NodeName, TTL: o.TTL,
		DialTimeout: o.DialTimeout, Range: o.MachineRange, Logger: o.Logger, LowestFirst: o.lowestFirst,
	}, (*backend)(l))
	return l
}

// Options returns the options in force (the DSN as given: do not log it).
func (l *Lease) Options() Options { return l.o }

// backend is the Lease as a leasekit.Backend (a StoreMark unlike the engine's).
type backend Lease

func (b *backend) Open(ctx context.Context, now func() int64) (err error) {
	if b.now, b.pool = now, b.given; b.pool == nil {
		b.pool, err = pgxpool.NewWithConfig(ctx, b.cfg) // connects lazily
	}
	return b.dbError(ctx, "connecting", err)
}

func (b *backend) Close() {
	if b.given == nil && b.pool != nil {
		b.pool.Close()
	}
}

// CheckClock checks the server's replication (a pool given has no check at
// connect), then its clock against ours around the statement.
func (b *backend) CheckClock(ctx context.Context) error {
	if err := b.ensureTable(ctx); err != nil {
		return err
	}
	cctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	var dbMs, sent int64
	err := b.pool.AcquireFunc(cctx, func(c *pgxpool.Conn) error {
		if err := b.repl.Check(cctx, c.Conn()); err != nil {
			return err
		}
		sent = b.now()
		return c.QueryRow(cctx, b.sql.clock).Scan(&dbMs)
	})
	if re := new(pgrepl.Error); errors.As(err, &re) {
		return re
	} else if err != nil {
		return b.dbError(cctx, "reading the server's clock", err)
	}
	db := dbMs * int64(time.Millisecond) // the server reads whole ms
	if skew := leasekit.Skew(sent, b.now(), db, db+int64(time.Millisecond)); skew.Abs() > b.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Bound: b.o.MaxClockSkew, Provider: "pglease", Against: "the PostgreSQL server's"}
	}
	return nil
}

// NewToken draws a random positive token: every claim writes a new one, so
// a holder whose id was taken over (even via a deleted row) never matches.
func (b *backend) NewToken(ctx context.Context) (int64, time.Duration, error) {
	var r [8]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return int64(binary.BigEndian.Uint64(r[:])>>1) | 1, b.o.TTL, b.ensureTable(ctx)
}

// TryClaim takes id when free or lapsed, else lists the live ids, in one
// statement. A claim row with no mark left is a lost mark.
func (b *backend) TryClaim(ctx context.Context, token, id int64) (leasekit.Claimed, error) {
	cctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	var existed *bool
	var rowMark, marksMark *int64
	var live []int32
	err := b.pool.QueryRow(cctx, b.sql.claim, b.o.Prefix, id, b.o.NodeName, token, b.o.TTL.Milliseconds()).Scan(&existed, &rowMark, &marksMark, &live)
	if err != nil {
		return leasekit.Claimed{}, b.dbError(cctx, fmt.Sprintf("claiming machine %d", id), err)
	}
	if existed == nil {
		c := leasekit.Claimed{Taken: map[int64]bool{id: true}}
		for _, m := range live {
			c.Taken[int64(m)] = true
		}
		return c, nil
	}
	c := leasekit.Claimed{OK: true, Mark: *rowMark, MarkLost: *existed && marksMark == nil && *rowMark == 0}
	if marksMark != nil {
		c.Mark = max(c.Mark, *marksMark)
	}
	return c, nil
}

func (b *backend) Renew(ctx context.Context, c leasekit.Claim) (time.Duration, error) {
	return b.o.TTL, b.exec(ctx, "renewing", b.sql.renew, c, b.o.TTL.Milliseconds(), b.o.NodeName)
}

func (b *backend) Held(ctx context.Context, c leasekit.Claim) (mark int64, err error) {
	hctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	if err = b.pool.QueryRow(hctx, b.sql.held, b.o.Prefix, c.Machine, c.Token).Scan(&mark); errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("the row of machine %d is gone or carries another token: %w", c.Machine, ErrNotHeld)
	}
	return mark, b.dbError(hctx, fmt.Sprintf("checking machine %d", c.Machine), err)
}

func (b *backend) StoreMark(ctx context.Context, c leasekit.Claim, ms int64) error {
	return b.exec(ctx, "storing the mark of", b.sql.storeMark, c, ms, b.o.NodeName)
}

// Release lets the claim lapse at once (expires_at = -infinity).
func (b *backend) Release(ctx context.Context, c leasekit.Claim) error {
	_, err := b.pool.Exec(ctx, b.sql.release, b.o.Prefix, c.Machine, c.Token)
	return b.dbError(ctx, "releasing", err)
}

// exec runs a write of c's holder: no row changed means the id is not c's.
func (b *backend) exec(ctx context.Context, doing, sql string, c leasekit.Claim, args ...any) error {
	ectx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	tag, err := b.pool.Exec(ectx, sql, append([]any{b.o.Prefix, c.Machine, c.Token}, args...)...)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("the row of machine %d is gone or carries another token: the id was taken over: %w", c.Machine, ErrNotHeld)
	}
	return b.dbError(ectx, fmt.Sprintf("%s machine %d", doing, c.Machine), err)
}

// statements are the lease's SQL for one table. A holder's every write names
// its token, so that a node whose id was taken over changes nothing; expiry
// is the database's now(). Marks are kept in the claim row (which a takeover
// reads under its lock) and in <table>_marks, which nothing deletes.
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
		// Take $2 when free or lapsed, else list the live ids. Of two claims
		// of one id the second waits for the first's row lock, then finds it
		// live. existed: the id had a row (xmax is set on an updated one).
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
		// A row still carrying our token was never taken over, lapsed or
		// not: renewing it leaves one holder.
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

// ensureTable creates the tables unless they exist (tables a DBA made need
// no CREATE privilege), under an advisory lock: concurrent CREATE TABLE IF
// NOT EXISTS can fail on each other. A claims table of an earlier version
// gets its marks table, its marks copied.
func (b *backend) ensureTable(ctx context.Context) error {
	if b.tableReady {
		return nil
	}
	cctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	err := pgx.BeginFunc(cctx, b.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(cctx, `SELECT to_regclass($1) IS NOT NULL`, b.sql.marks).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(cctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "vesta-go pglease "+b.sql.table); err != nil {
			return err
		}
		_, err := tx.Exec(cctx, b.sql.create+`; `+b.sql.copy)
		return err
	})
	b.tableReady = err == nil
	return b.dbError(cctx, "creating the tables "+b.o.Table+" and "+b.o.Table+"_marks (grant CREATE on their schema, or create them as docs/operations.md shows)", err)
}

// dbError wraps the failure (nil: none) of a statement made with ctx. A
// network error, a timeout, a connection exception (SQLSTATE 08) or a shutdown
// (57P01..03) is a leasekit.UnreachableError; a refusal is not.
func (b *backend) dbError(ctx context.Context, doing string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("pglease: PostgreSQL %s: %s%s: %w", b.server, doing, leasekit.TimedOut(ctx, err, b.o.DialTimeout), err)
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
