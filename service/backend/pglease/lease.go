// Package pglease leases Vesta machine ids (0..1023) from PostgreSQL: the
// backend of the lease engine etcdlease shares; a Lease is a machineid.Lease.
//
// A claim is a row of Options.Table carrying a random fencing token, which every
// later write names: one statement inserts the row of a free id, or takes over one
// whose expires_at < now() (the database's clock). The marks live apart too, in
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
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/backend/internal/clockskew"
	"github.com/vesta-go/vesta/service/backend/internal/leasekit"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/backend/pgrepl"
	"github.com/vesta-go/vesta/service/machineid"
)

// Defaults, errors and error types of both leases (package lease), shared with etcdlease.
const (
	DefaultTable        = lease.DefaultTable
	DefaultPrefix       = lease.DefaultPrefix
	DefaultTTL          = lease.DefaultTTL
	DefaultDialTimeout  = lease.DefaultDialTimeout
	DefaultMaxClockSkew = lease.DefaultMaxClockSkew
)

var (
	ErrAllTaken = lease.ErrAllTaken // every id of the range is held (intf.ErrUnavailable)
	ErrNotHeld  = lease.ErrNotHeld  // the row carries another token (intf.ErrFenced)
	ErrRunning  = lease.ErrRunning  // Run was called on a Lease that runs already
)

type (
	OptionError     = lease.OptionError         // names the wrong Options field
	MarksAheadError = machineid.MarksAheadError // ids given back for marks too far ahead
	ClockSkewError  = lease.ClockSkewError      // this clock is off the server's by more than MaxClockSkew
	Range           = machineid.Range           // machine ids First..Last
	Common          = lease.Common              // the options etcdlease takes too
)

// Options configures a Lease: only DSN is required, a zero field takes its default.
type Options struct {
	DSN    string // a URL (postgres://user:password@host:5432/db) or key=value pairs; nothing here shows its password
	Table  string // of the claims, maybe schema.table (default vesta_machines; marks in <Table>_marks, layouts in <Table>_layout), created when missing
	Common        // NodeName is written in the holder column; MaxClockSkew is against the server's
	// AllowAsyncFailover accepts several servers whose primary does not replicate
	// synchronously, though a failover could lose claims and hand an id out twice.
	AllowAsyncFailover bool

	lowestFirst bool // claim the lowest free id (tests)
}

var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,55}$`)

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the DSN is parsed, not dialled).
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields and validates them; dialing (no pool given) parses the DSN.
func (o Options) withDefaults(dialing bool) (Options, *pgxpool.Config, error) {
	o.Table = cmp.Or(o.Table, DefaultTable)
	cfg, err := pgxpool.ParseConfig(o.DSN) // its error hides the password
	if strings.TrimSpace(o.DSN) == "" {
		err = errors.New("empty DSN")
	}
	var dsn *OptionError
	if dialing && err != nil {
		dsn = &OptionError{Option: "DSN", Value: "(not shown: it may hold a password)", Want: "a PostgreSQL URL or key=value DSN", Err: err}
	}
	check := leasekit.Check
	err = leasekit.Fill(&o.Common, "pglease", func() []*OptionError {
		return []*OptionError{dsn,
			check(tableName.MatchString(o.Table), "Table", o.Table, "a table name, optionally schema.table, of letters, digits and _ (at most 56: its marks are in <table>_marks, the fleets' layouts in <table>_layout)"),
			check(len(o.Prefix) <= 200, "Prefix", o.Prefix, "a fleet name of 1..200 bytes, such as /vesta"),
			check(len(o.NodeName) <= 200 && !strings.ContainsAny(o.NodeName, "\n\r\x00"), "NodeName", o.NodeName, "a name of 1..200 bytes on one line")}
	})
	return o, cfg, err
}

// Lease leases a machine id from a PostgreSQL table for one service.
type Lease struct {
	engine     *leasekit.Engine // the one lease engine; Lease is its backend
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
func New(o Options) (*Lease, error) { return newLease(o, nil) }

// NewWithPool is New for a pool the caller made, which Run never closes; o.DSN is unused.
func NewWithPool(pool *pgxpool.Pool, o Options) (*Lease, error) {
	if pool == nil {
		return nil, &OptionError{Provider: "pglease", Option: "pool", Want: "a *pgxpool.Pool"}
	}
	return newLease(o, pool)
}

func newLease(o Options, pool *pgxpool.Pool) (*Lease, error) {
	o, cfg, err := o.withDefaults(pool == nil)
	if err != nil {
		return nil, err
	}
	if pool != nil {
		cfg = pool.Config()
	} else {
		cfg.ConnConfig.ConnectTimeout = cmp.Or(cfg.ConnConfig.ConnectTimeout, o.DialTimeout)
		cfg.MaxConns = 4 // a renewal, a check, a mark store and a release at once at most
	}
	cc := cfg.ConnConfig
	l := &Lease{o: o, cfg: cfg, given: pool, server: fmt.Sprintf("%s:%d/%s", cc.Host, cc.Port, cc.Database), sql: newStatements(o.Table)}
	l.repl = &pgrepl.Policy{Who: "pglease", DSNKey: "machineDSN", AllowKey: "machineAllowAsyncFailover", Does: "claim machine ids",
		Lost: "A claim or a mark stored just before a failover", Hosts: len(pgrepl.Servers(&cc.Config)), Allow: o.AllowAsyncFailover, Logger: o.Logger}
	l.engine = leasekit.NewEngine(leasekit.Config{
		Provider: "pglease", Coordinator: "PostgreSQL", Marks: "the table " + o.Table + "_marks", Claims: "fleet " + o.Prefix + " in " + o.Table,
		Layout:    (*backend)(l).where(),
		Endpoints: "postgres://" + l.server + "?table=" + o.Table, Common: o.Common, LowestFirst: o.lowestFirst,
	}, (*backend)(l))
	if pool == nil {
		cfg.AfterConnect = l.repl.Check // a failover to an unsafe primary is refused too
	}
	return l, nil
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
// connect), then its clock against ours.
func (b *backend) CheckClock(ctx context.Context) error {
	ctx, cancel := outage.Bound(ctx, b.o.DialTimeout) // the engine leaves CheckClock's bound to each backend
	defer cancel()
	if err := b.ensureTable(ctx); err != nil {
		return err
	}
	var dbMs, sent int64
	err := b.pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		if err := b.repl.Check(ctx, c.Conn()); err != nil {
			return err
		}
		sent = b.now()
		return c.QueryRow(ctx, b.sql.clock).Scan(&dbMs)
	})
	if re := new(pgrepl.Error); errors.As(err, &re) {
		return re
	} else if err != nil {
		return b.dbError(ctx, "reading the server's clock", err)
	}
	db := dbMs * int64(time.Millisecond) // the server reads whole ms
	if skew := clockskew.Skew(sent, b.now(), db, db+int64(time.Millisecond)); skew.Abs() > b.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Bound: b.o.MaxClockSkew, Provider: "pglease", Against: "the PostgreSQL server's"}
	}
	return nil
}

// NewToken draws a random positive token: a holder whose id was taken over never matches.
func (b *backend) NewToken(ctx context.Context) (int64, time.Duration, error) {
	var r [8]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return int64(binary.BigEndian.Uint64(r[:])>>1) | 1, b.o.TTL, b.ensureTable(ctx)
}

// TryClaim takes id when free or lapsed, else lists the live ids: one statement.
func (b *backend) TryClaim(ctx context.Context, token, id int64) (leasekit.Claimed, error) {
	var existed *bool
	var rowMark, marksMark *int64
	var live []int32
	err := b.pool.QueryRow(ctx, b.sql.claim, b.o.Prefix, id, b.o.NodeName, token, b.o.TTL.Milliseconds()).Scan(&existed, &rowMark, &marksMark, &live)
	if err != nil {
		return leasekit.Claimed{}, b.dbError(ctx, fmt.Sprintf("claiming machine %d", id), err)
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
	if err = b.pool.QueryRow(ctx, b.sql.held, b.o.Prefix, c.Machine, c.Token).Scan(&mark); errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("the row of machine %d is gone or carries another token: %w", c.Machine, ErrNotHeld)
	}
	return mark, b.dbError(ctx, fmt.Sprintf("checking machine %d", c.Machine), err)
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
	tag, err := b.pool.Exec(ctx, sql, append([]any{b.o.Prefix, c.Machine, c.Token}, args...)...)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("the row of machine %d is gone or carries another token: the id was taken over: %w", c.Machine, ErrNotHeld)
	}
	return b.dbError(ctx, fmt.Sprintf("%s machine %d", doing, c.Machine), err)
}

// statements are the lease's SQL for one table. A holder's every write names its
// token; expiry is the database's now(). Marks are kept in the claim row (which a
// takeover reads under its lock) and in <table>_marks, which nothing deletes.
type statements struct {
	table, marks, layout                                                    string // quoted
	create, claim, renew, held, storeMark, release, clock, copy, swapLayout string
}

func newStatements(table string) statements {
	quote := func(name string) string { return pgx.Identifier(strings.Split(name, ".")).Sanitize() }
	t, mk, lt := quote(table), quote(table+"_marks"), quote(table+"_layout")
	return statements{
		table: t, marks: mk, layout: lt,
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
	PRIMARY KEY (prefix, machine));
CREATE TABLE IF NOT EXISTS ` + lt + ` (
	prefix text PRIMARY KEY,
	layout text NOT NULL)`,
		// The marks of a table made by an earlier version.
		copy: `INSERT INTO ` + mk + ` SELECT prefix, machine, mark_ms FROM ` + t + ` WHERE mark_ms > 0 ON CONFLICT DO NOTHING`,
		// Take $2 when free or lapsed, else list the live ids; row locks let one
		// of two claims win. existed: the id had a row (xmax is set on an update).
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
		// A row still carrying our token, lapsed or not, was never taken over.
		renew: `UPDATE ` + t + ` SET expires_at = now() + $4 * interval '1 millisecond', holder = $5
	WHERE prefix = $1 AND machine = $2 AND token = $3`,
		held: `SELECT greatest(c.mark_ms, (SELECT mark_ms FROM ` + mk + ` WHERE prefix = $1 AND machine = $2))
	FROM ` + t + ` c WHERE prefix = $1 AND machine = $2 AND token = $3`,
		storeMark: `WITH held AS (UPDATE ` + t + ` SET mark_ms = $4, holder = $5 WHERE prefix = $1 AND machine = $2 AND token = $3 RETURNING 1)
INSERT INTO ` + mk + ` (prefix, machine, mark_ms) SELECT $1, $2, $4 FROM held
ON CONFLICT (prefix, machine) DO UPDATE SET mark_ms = excluded.mark_ms`,
		release: `UPDATE ` + t + ` SET expires_at = '-infinity' WHERE prefix = $1 AND machine = $2 AND token = $3`,
		clock:   `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`,
		// Insert when $2 is NULL (no record), else update if it still holds $2.
		swapLayout: `WITH put AS (INSERT INTO ` + lt + ` (prefix, layout) SELECT $1::text, $3::text WHERE $2::text IS NULL ON CONFLICT (prefix) DO NOTHING RETURNING layout),
	upd AS (UPDATE ` + lt + ` SET layout = $3 WHERE prefix = $1 AND layout = $2::text RETURNING layout)
SELECT layout FROM put UNION ALL SELECT layout FROM upd
UNION ALL SELECT layout FROM ` + lt + ` WHERE prefix = $1 AND NOT EXISTS (SELECT 1 FROM put UNION ALL SELECT 1 FROM upd)`,
	}
}

// ensureTable creates the tables unless they exist (a DBA's need no CREATE
// privilege), under an advisory lock: concurrent CREATE TABLE IF NOT EXISTS can
// fail on each other. An earlier version's claims get their marks copied.
func (b *backend) ensureTable(ctx context.Context) error {
	if b.tableReady {
		return nil
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL`, b.sql.marks, b.sql.layout).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "vesta-go pglease "+b.sql.table); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, b.sql.create+`; `+b.sql.copy)
		return err
	})
	b.tableReady = err == nil
	return b.dbError(ctx, "creating the tables "+b.o.Table+", "+b.o.Table+"_marks and "+b.o.Table+"_layout (grant CREATE on their schema, or create them as docs/operations.md shows)", err)
}

// dbError wraps the failure (nil: none) of a statement made with ctx: no answer
// (outage.Silent), or a connection that fails without the server's word, is an outage.
func (b *backend) dbError(ctx context.Context, doing string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("pglease: PostgreSQL %s: %s%s: %w", b.server, doing, outage.TimedOut(ctx, err, b.o.DialTimeout), err)
	var ce *pgconn.ConnectError
	if outage.Silent(err) || outage.TimedOut(ctx, err, 0) != "" || (errors.As(err, &ce) && !errors.As(err, new(*pgconn.PgError))) {
		return outage.Error{Err: err}
	}
	return err
}

// Run, StoreMark, MarkSpan and Stats are the engine's: a machineid.Lease
// that keeps its mark ahead (machineid.MarkSpan) and counts (Stats.Lease).
func (l *Lease) Run(ctx context.Context, h machineid.Holder) error { return l.engine.Run(ctx, h) }
func (l *Lease) StoreMark(ctx context.Context, m, ms int64) error {
	return l.engine.StoreMark(ctx, m, ms)
}
func (l *Lease) MarkSpan() (keep, step time.Duration) { return l.engine.MarkSpan() }
func (l *Lease) Stats() machineid.LeaseStats          { return l.engine.Stats() }
