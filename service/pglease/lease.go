package pglease

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
	"github.com/vesta-go/vesta/service/internal/pgrepl"
)

// Lease leases a machine id from a PostgreSQL table. It implements
// service.MachineLease (Run, StoreMark, Stats) with the one lease engine
// the etcd lease shares; this package is its PostgreSQL backend. One Lease
// serves one service.
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

var _ service.MachineLease = (*Lease)(nil)

// New validates o (an *OptionError names the wrong field) and parses the
// DSN. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) {
	o, cfg, err := o.withDefaults(true)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = o.DialTimeout
	}
	cfg.MaxConns = 4 // a renewal, a check, a mark store and a release at once at most
	l := newLease(o, cfg, nil)
	cfg.AfterConnect = l.repl.Check // a failover to an unsafe primary is refused too
	return l, nil
}

// NewWithPool is New for a pool the caller made, as etcd's
// concurrency.NewSession takes a client: Run uses pool and never closes it.
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
	r := leasekit.FullRange
	if o.MachineRange != nil {
		r = *o.MachineRange
	}
	l.Engine = leasekit.NewEngine(leasekit.Config{
		Provider: "pglease", Coordinator: "PostgreSQL", Marks: "the table " + o.Table + "_marks", Claims: "fleet " + o.Prefix + " in " + o.Table,
		Endpoints: "postgres://" + l.server + "?table=" + o.Table, Prefix: o.Prefix, NodeName: o.NodeName, TTL: o.TTL,
		DialTimeout: o.DialTimeout, Range: r, Logger: o.Logger, LowestFirst: o.lowestFirst,
	}, (*backend)(l))
	return l
}

// Options returns the options in force, defaults filled in (the DSN as
// given: do not log it).
func (l *Lease) Options() Options { return l.o }
