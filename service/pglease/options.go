package pglease

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Defaults of Options; the timings' (and their limits: TTL 2s..1h in
// whole seconds, DialTimeout 10ms..1m, MaxClockSkew 1ms..1h) are
// etcdlease's, as the two providers are configured alike.
const (
	DefaultTable        = leasekit.DefaultTable
	DefaultPrefix       = leasekit.DefaultPrefix
	DefaultTTL          = leasekit.DefaultTTL
	DefaultDialTimeout  = leasekit.DefaultDialTimeout
	DefaultMaxClockSkew = leasekit.DefaultMaxClockSkew
)

// Options configures a Lease. Only DSN is required; a zero field takes its
// default. New validates them.
type Options struct {
	// DSN of the database: a URL (postgres://user:password@host:5432/db)
	// or key=value pairs. It may hold a password: no log line or error of
	// this package shows it.
	DSN string
	// Table holding the claims, optionally schema-qualified
	// (default vesta_machines); created when missing.
	Table string
	// Prefix names the fleet in the table's prefix column (default
	// /vesta). Nodes that must not share a machine id share it.
	Prefix string
	// TTL of a claim, whole seconds from 2s (default 1m): a node renews
	// every TTL/3 and stops issuing TTL − FenceMargin(TTL) after its last
	// renewal, so it rides out a database outage of at least 2/3 of TTL;
	// it is also how long the id of a node that died for good stays
	// taken.
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
	// AllowAsyncFailover accepts a DSN naming several servers whose
	// primary does not replicate synchronously: a failover can then lose
	// claims and marks and hand an id out twice. Without it such a server
	// is refused at start, and every connection to one after a failover
	// (service/internal/pgrepl, the segment store's check).
	AllowAsyncFailover bool
	// Logger receives the lease's transitions; nil means slog.Default().
	Logger *slog.Logger

	// lowestFirst makes claims try the lowest free id (tests).
	lowestFirst bool
}

// tableName is a table, optionally schema-qualified, of plain identifiers.
var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,56}$`)

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the DSN is parsed, not dialled).
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields, validates every field and parses the
// DSN (unless the caller gives a pool: dialing false).
func (o Options) withDefaults(dialing bool) (Options, *pgxpool.Config, error) {
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	timings := leasekit.Timings{TTL: &o.TTL, DialTimeout: &o.DialTimeout, MaxClockSkew: &o.MaxClockSkew}
	timings.Fill()
	o.NodeName = leasekit.NodeName(o.NodeName, os.Getpid())
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var cfg *pgxpool.Config
	checks := append([]func() *OptionError{
		func() *OptionError {
			var err error
			if !dialing {
				return nil
			}
			if cfg, err = ParseDSN(o.DSN); err != nil {
				return &OptionError{Option: "DSN", Value: "(not shown: it may hold a password)", Want: "a PostgreSQL URL or key=value DSN", Err: err}
			}
			return nil
		},
		func() *OptionError {
			return leasekit.Check(tableName.MatchString(o.Table), "Table", o.Table, "a table name, optionally schema.table, of letters, digits and _ (at most 57: its marks are in <table>_marks)")
		},
		func() *OptionError {
			return leasekit.Check(o.Prefix != "" && len(o.Prefix) <= 200, "Prefix", o.Prefix, "a fleet name of 1..200 bytes, such as /vesta")
		},
	}, timings.Checks()...)
	err := leasekit.CheckAll("pglease", append(checks,
		func() *OptionError {
			return leasekit.Check(o.NodeName != "" && len(o.NodeName) <= 200 && !strings.ContainsAny(o.NodeName, "\n\r\x00"),
				"NodeName", o.NodeName, "a name of 1..200 bytes on one line")
		},
		leasekit.CheckRange(o.MachineRange),
	)...)
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
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// server names the database of cfg for logs, errors and the saved lease
// state: host:port/database, never the password.
func server(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
}
