package pglease

import (
	"cmp"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Defaults of Options; the timings' and their limits are etcdlease's.
const (
	DefaultTable        = leasekit.DefaultTable
	DefaultPrefix       = leasekit.DefaultPrefix
	DefaultTTL          = leasekit.DefaultTTL
	DefaultDialTimeout  = leasekit.DefaultDialTimeout
	DefaultMaxClockSkew = leasekit.DefaultMaxClockSkew
)

// The errors and error types are the lease engine's, shared with etcdlease.
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
	// DSN of the database: a URL (postgres://user:password@host:5432/db) or
	// key=value pairs. It may hold a password: nothing here shows it.
	DSN string
	// Table of the claims, optionally schema-qualified (default
	// vesta_machines); the marks are in <Table>_marks. Created when missing.
	Table string
	// Prefix names the fleet (default /vesta): nodes that must not share a
	// machine id share it.
	Prefix string
	// TTL of a claim, whole seconds from 2s (default 1m): a node renews
	// every TTL/3 and stops issuing TTL − FenceMargin(TTL) after its last
	// renewal; it is also how long a dead node's id stays taken.
	TTL time.Duration
	// DialTimeout bounds connecting and every statement (default 5s).
	DialTimeout time.Duration
	// NodeName is written in the holder column (default hostname-pid).
	NodeName string
	// MaxClockSkew is how far this node's clock may differ from the
	// database server's before it refuses to claim an id (default 1s).
	MaxClockSkew time.Duration
	// MachineRange limits the ids this fleet claims (nil: all, 0-1023).
	MachineRange *Range
	// AllowAsyncFailover accepts a DSN naming several servers whose primary
	// does not replicate synchronously: a failover could lose claims and
	// marks and hand an id out twice. Without it such a server is refused
	// at start and at every new connection.
	AllowAsyncFailover bool
	// Logger receives the lease's transitions; nil means slog.Default().
	Logger *slog.Logger

	lowestFirst bool // claim the lowest free id (tests)
}

// tableName is a table, optionally schema-qualified, of plain identifiers.
var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,56}$`)

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the DSN is parsed, not dialled).
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields, validates them and parses the DSN
// (unless the caller gives a pool: dialing false).
func (o Options) withDefaults(dialing bool) (Options, *pgxpool.Config, error) {
	o.Table = cmp.Or(o.Table, DefaultTable)
	var cfg *pgxpool.Config
	err := leasekit.Common("pglease", &o.Prefix, &o.TTL, &o.DialTimeout, &o.MaxClockSkew, &o.NodeName, o.MachineRange, &o.Logger,
		func() *OptionError {
			var err error
			if cfg, err = ParseDSN(o.DSN); dialing && err != nil {
				return &OptionError{Option: "DSN", Value: "(not shown: it may hold a password)", Want: "a PostgreSQL URL or key=value DSN", Err: err}
			}
			return nil
		},
		func() *OptionError {
			return leasekit.Check(tableName.MatchString(o.Table), "Table", o.Table, "a table name, optionally schema.table, of letters, digits and _ (at most 57: its marks are in <table>_marks)")
		},
		func() *OptionError {
			return leasekit.Check(len(o.Prefix) <= 200, "Prefix", o.Prefix, "a fleet name of 1..200 bytes, such as /vesta")
		},
		func() *OptionError {
			return leasekit.Check(len(o.NodeName) <= 200 && !strings.ContainsAny(o.NodeName, "\n\r\x00"), "NodeName", o.NodeName, "a name of 1..200 bytes on one line")
		})
	if err != nil {
		return o, nil, err
	}
	return o, cfg, nil
}

// ParseDSN checks a PostgreSQL DSN without connecting. Its error never
// repeats the password (pgx masks it).
func ParseDSN(dsn string) (*pgxpool.Config, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, fmt.Errorf("empty DSN")
	}
	return pgxpool.ParseConfig(dsn)
}
