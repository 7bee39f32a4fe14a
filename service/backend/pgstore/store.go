package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/backend/pgrepl"
	"github.com/vesta-go/vesta/service/internal/segsql"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Store is a segstore.Store on a pgx pool.
type Store struct {
	pool  *pgxpool.Pool
	o     Options
	hosts int // distinct servers the DSN names
	repl  *pgrepl.Policy

	opened      atomic.Bool   // Open has returned it: refusals are logged
	refusing    atomic.Bool   // the last check refused the server
	asyncWarned atomic.Bool   // the allowed asynchronous replication was logged
	refusals    atomic.Uint64 // servers refused (ReplicationError)
	// warned holds, per connection, the last WARNING the server sent
	// (see Alloc).
	warned sync.Map // *pgconn.PgConn → string
}

// Options tune a Store.
type Options struct {
	// AllowAsyncFailover accepts a DSN that names several servers while
	// the primary replicates asynchronously (segmentAllowAsyncFailover).
	// A failover can then repeat IDs; it is logged. Without it, such a
	// primary is refused at Open and, found later (a failover, a
	// reload of its settings), for every allocation.
	AllowAsyncFailover bool
	// Logger receives the refusals and the accepted risk; nil means
	// slog.Default().
	Logger *slog.Logger
	// NowSQL is the SQL expression of the database's clock that
	// AllocPeriod reads the period from, a timestamptz; "" means now().
	// A test replaces it to shift the clock, e.g. with
	// "(SELECT t FROM test_clock)".
	NowSQL string
}

var _ segstore.Store = (*Store)(nil)

// ParseDSN checks a PostgreSQL DSN, a URL (postgres://user@host/db) or
// key=value pairs (host=... dbname=...), without connecting. Its error
// never repeats the password.
func ParseDSN(dsn string) (*pgxpool.Config, error) {
	if dsn == "" {
		return nil, errors.New("segment store postgres: empty DSN")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("segment store postgres: %w", err)
	}
	return cfg, nil
}

// DefaultConnectTimeout bounds each new connection when the DSN sets no
// connect_timeout (pgx has none by default: a silent host would hold a
// connection attempt until the kernel gives up, minutes later).
const DefaultConnectTimeout = 5 * time.Second

// Open connects to dsn with the default Options.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenOptions(ctx, dsn, Options{})
}

// OpenOptions connects to dsn and checks the connection with a ping. It
// does not create the table: call Init.
//
// A DSN may name several servers (host=a,b or postgres://u@a:5432,b:5432/db):
// connections go to the first that accepts writes (target_session_attrs
// defaults to read-write), and after a failover the pool's new connections
// find the new primary by themselves. Every new connection, and every
// allocation, checks the server: a standby is refused (ErrStandby), and
// with several servers so is a primary that does not replicate
// synchronously (ErrUnsafeReplication), unless o.AllowAsyncFailover.
func OpenOptions(ctx context.Context, dsn string, o Options) (*Store, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = DefaultConnectTimeout
	}
	if cc.ValidateConnect == nil {
		// No target_session_attrs (or any): skip standbys, so that a DSN
		// listing the standby first still finds the primary.
		cc.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	}
	s := &Store{o: o, hosts: len(servers(&cc.Config))}
	s.repl = s.policy(s.hosts)
	cc.OnNotice = s.noticed
	cfg.AfterConnect = s.checkReplication
	cfg.BeforeClose = func(c *pgx.Conn) { s.warned.Delete(c.PgConn()) }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("segment store postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		var re *ReplicationError
		if errors.As(err, &re) {
			return nil, re
		}
		return nil, dbError("connecting to "+strings.Join(servers(&cc.Config), ","), err)
	}
	s.pool = pool
	s.opened.Store(true)
	return s, nil
}

// Refusals counts the servers refused since Open: standbys, and primaries
// whose replication is unsafe for the DSN (ReplicationError).
func (s *Store) Refusals() uint64 { return s.refusals.Load() }

// Init creates leaf_alloc and the period tags' tables if they do not
// exist.
func (s *Store) Init(ctx context.Context) error {
	for _, q := range append([]string{segsql.SchemaSQL}, segsql.PeriodSchemaSQL...) {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			return dbError("creating the tables", err)
		}
	}
	return nil
}

// Tags lists every row, ordered by tag.
func (s *Store) Tags(ctx context.Context) ([]segstore.TagInfo, error) {
	rows, err := s.pool.Query(ctx, segsql.TagsSQL)
	if err != nil {
		return nil, dbError("listing tags", err)
	}
	var tags []segstore.TagInfo
	for rows.Next() {
		var t segstore.TagInfo
		var updated *time.Time
		if err := rows.Scan(&t.Tag, &t.MaxId, &t.Step, &t.Description, &updated); err != nil {
			rows.Close()
			return nil, dbError("listing tags", err)
		}
		if updated != nil {
			t.UpdateTime = *updated
		}
		tags = append(tags, t)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError("listing tags", err)
	}
	return tags, nil
}

// Alloc advances max_id by step (the row's step when step <= 0) with one
// UPDATE ... RETURNING and returns the new max_id and the row's step.
//
// With a DSN naming several servers it first checks the server's
// replication again (its settings may have been reloaded since the
// connection was made): a refusal is a *ReplicationError. A commit that the server confirms with a WARNING —
// PostgreSQL's answer when the wait for the synchronous standby is
// cancelled (pg_cancel_backend): committed here, maybe not on the standby
// — is not trusted: the range is skipped and ErrUnconfirmedCommit
// returned, since a failover could hand it out again.
func (s *Store) Alloc(ctx context.Context, tag string, step int64) (maxId, dbStep int64, err error) {
	err = s.allocate(ctx, tag, func(conn *pgxpool.Conn) error {
		q, args := segsql.AllocQuery(tag, step)
		err := conn.QueryRow(ctx, q, args...).Scan(&maxId, &dbStep)
		if errors.Is(err, pgx.ErrNoRows) {
			var n int64
			if err = conn.QueryRow(ctx, segsql.ExistsSQL, tag).Scan(&n); err == nil {
				return segstore.AllocMiss(tag, n > 0)
			}
		}
		if err != nil {
			return dbError(fmt.Sprintf("allocating for %q", tag), err)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return maxId, dbStep, nil
}

// allocate runs one allocation, f, on a connection: with a DSN naming
// several servers it checks the server's replication first, and a commit
// the server confirmed with a WARNING fails it (see Alloc).
func (s *Store) allocate(ctx context.Context, tag string, f func(conn *pgxpool.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return dbError(fmt.Sprintf("allocating for %q", tag), err)
	}
	defer conn.Release()
	if s.hosts > 1 { // one host: the connection's check holds (a primary turns standby only by a restart)
		if err := s.checkReplication(ctx, conn.Conn()); err != nil {
			return fmt.Errorf("segment tag %q: %w", tag, err)
		}
	}
	pc := conn.Conn().PgConn()
	s.warned.Delete(pc)
	if err := f(conn); err != nil {
		return err
	}
	if w, warned := s.warned.LoadAndDelete(pc); warned {
		return fmt.Errorf("segment store postgres: allocating for %q: the server answered %q; the range is skipped: %w",
			tag, w, ErrUnconfirmedCommit)
	}
	return nil
}

// ErrUnconfirmedCommit: the server confirmed an allocation with a warning
// (a cancelled wait for the synchronous standby): the range is skipped.
var ErrUnconfirmedCommit = errors.New("segment store postgres: allocation committed without confirmation from the synchronous standby")

// noticed keeps the WARNINGs a server sends, for Alloc.
func (s *Store) noticed(pc *pgconn.PgConn, n *pgconn.Notice) {
	sev := n.SeverityUnlocalized
	if sev == "" {
		sev = n.Severity
	}
	if sev == "WARNING" {
		s.warned.Store(pc, n.Message)
	}
}

// CreateTag inserts a row, or returns segstore.ErrTagExists.
func (s *Store) CreateTag(ctx context.Context, t segstore.TagInfo) error {
	if err := t.Validate(); err != nil {
		return err
	}
	ct, err := s.pool.Exec(ctx, segsql.CreateTagSQL, t.Tag, t.MaxId, t.Step, t.Description)
	if err != nil {
		return dbError(fmt.Sprintf("creating tag %q", t.Tag), err)
	}
	if ct.RowsAffected() == 0 {
		return fmt.Errorf("segment tag %q: %w", t.Tag, segstore.ErrTagExists)
	}
	return nil
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// dbError wraps a failure of the database as the store's error, its
// message without the database user and name that pgx puts in a failed
// connection's ("failed to connect to `user=ids database=ids`: ..."): the
// message reaches the callers, the REST and RPC clients. errors.Is and As
// still see err.
func dbError(doing string, err error) error {
	return &redactedError{msg: "segment store postgres: " + doing + ": " + connectTarget.ReplaceAllString(err.Error(), "failed to connect"), err: err}
}

var connectTarget = regexp.MustCompile("failed to connect to `[^`]*`")

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
