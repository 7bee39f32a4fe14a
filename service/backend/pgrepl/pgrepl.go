// Package pgrepl is the one check, shared by the segment store and the
// machine lease, that a PostgreSQL server is safe to hand numbers out
// from: never a standby, and — when the DSN names several servers, so that
// a failover may move the clients to another — a primary whose commits
// wait for a synchronous standby, unless the operator accepts the risk.
// With asynchronous replication a failover can lose what the old primary
// confirmed, and the new one hands it out again: duplicate IDs.
package pgrepl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A *Error matches one of these (errors.Is).
var (
	// ErrUnsafe: the DSN names several hosts but the primary does not
	// confirm commits on a standby.
	ErrUnsafe = errors.New("replication unsafe for failover")
	// ErrStandby: the server connected to is a standby (in recovery).
	ErrStandby = errors.New("connected to a standby")
)

// Replication is what a server says about itself.
type Replication struct {
	// InRecovery: pg_is_in_recovery(), the server is a standby.
	InRecovery bool
	// SynchronousCommit and SynchronousStandbyNames are the session's
	// settings of those names.
	SynchronousCommit, SynchronousStandbyNames string
}

// Synchronous reports whether a commit returns only once a synchronous
// standby has it on disk (on) or has applied it (remote_apply): then a
// promoted standby holds every commit the old primary confirmed.
// remote_write is not enough (the standby may lose it in a crash of its
// own), nor are local and off, nor anything with no standby named.
func (r Replication) Synchronous() bool {
	return r.SynchronousStandbyNames != "" && (r.SynchronousCommit == "on" || r.SynchronousCommit == "remote_apply")
}

// Why says what is unsafe; "" when nothing is.
func (r Replication) Why() string {
	switch {
	case r.SynchronousStandbyNames == "":
		return "synchronous_standby_names is empty: commits do not wait for any standby"
	case !r.Synchronous():
		return "synchronous_commit is " + strconv.Quote(r.SynchronousCommit) + ": commits do not wait until a standby has them on disk"
	}
	return ""
}

// Read reads the server's replication state on conn, in one round trip.
func Read(ctx context.Context, conn *pgx.Conn) (Replication, error) {
	var r Replication
	err := conn.QueryRow(ctx, `SELECT pg_is_in_recovery(), current_setting('synchronous_commit'), current_setting('synchronous_standby_names')`).
		Scan(&r.InRecovery, &r.SynchronousCommit, &r.SynchronousStandbyNames)
	if err != nil {
		return r, fmt.Errorf("reading the replication settings: %w", err)
	}
	return r, nil
}

// Policy is what a user of the check refuses and how it says so.
type Policy struct {
	Who      string // the package in messages: "segment store postgres"
	DSNKey   string // the DSN's config key: "segmentDSN"
	AllowKey string // the key that accepts the risk: "segmentAllowAsyncFailover"
	Does     string // what a refused server would do: "allocate ranges"
	Lost     string // what a failover loses: "A range allocated just before a failover"
	Hosts    int    // distinct servers the DSN names
	Allow    bool   // the AllowKey is set
	Logger   *slog.Logger
	warned   atomic.Bool
}

// Error says why a server was refused.
type Error struct {
	*Policy
	Server string // host:port connected to
	Replication
}

func (e *Error) Error() string {
	if e.InRecovery {
		return fmt.Sprintf("%s: %s is a standby (pg_is_in_recovery() is true) and cannot %s: "+
			"point %s at the primary, or name every server with target_session_attrs=read-write so that only the primary is used",
			e.Who, e.Server, e.Does, e.DSNKey)
	}
	return fmt.Sprintf("%s: refusing to %s on %s: %s names %d servers, so it may fail over to a standby, but %s. "+
		"%s can then be missing on the new primary, which hands it out again: two instances would issue the same IDs. "+
		"Make replication synchronous (synchronous_commit = on or remote_apply, and synchronous_standby_names naming the standbys: docs/segment.md), "+
		"or accept the risk with %s: true",
		e.Who, e.Does, e.Server, e.DSNKey, e.Hosts, e.Why(), e.Lost, e.AllowKey)
}

// Is matches ErrStandby or ErrUnsafe.
func (e *Error) Is(target error) bool {
	if e.InRecovery {
		return target == ErrStandby
	}
	return target == ErrUnsafe
}

// Check reads conn's server and refuses (a *Error) a standby always and,
// when the DSN names several hosts, a primary that does not replicate
// synchronously unless allowed — then it warns, once.
func (p *Policy) Check(ctx context.Context, conn *pgx.Conn) error {
	r, err := Read(ctx, conn)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Who, err)
	}
	server := ServerOf(conn.PgConn())
	switch {
	case r.InRecovery:
		return &Error{Policy: p, Server: server, Replication: r}
	case p.Hosts < 2 || r.Synchronous():
		return nil
	case p.Allow:
		if !p.warned.Swap(true) {
			p.Logger.Warn(p.Who+": replication is asynchronous; allowed by "+p.AllowKey+
				": a failover can lose what the old primary handed out, and the new one hands it out again (duplicate IDs)",
				"server", server, "why", r.Why())
		}
		return nil
	}
	return &Error{Policy: p, Server: server, Replication: r}
}

// ServerOf is the host:port of a connection ("?" when unknown).
func ServerOf(pc *pgconn.PgConn) string {
	if pc == nil || pc.Conn() == nil {
		return "?"
	}
	return pc.Conn().RemoteAddr().String()
}

// Servers lists the distinct host:port a DSN names, in order: pgx spreads
// several hosts, and sslmode prefer or allow, over Fallbacks.
func Servers(c *pgconn.Config) []string {
	list := []string{net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))}
	for _, f := range c.Fallbacks {
		if h := net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port))); !slices.Contains(list, h) {
			list = append(list, h)
		}
	}
	return list
}
