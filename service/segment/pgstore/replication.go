package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vesta-go/vesta/service/segment/segspec"
)

// Replication errors. A *ReplicationError matches one of them (errors.Is).
var (
	// ErrUnsafeReplication: the DSN names several hosts (a failover may
	// move the store to another server) but the primary does not confirm
	// commits on a standby, so a range it handed out can be lost in the
	// failover and handed out again by the new primary.
	ErrUnsafeReplication = errors.New("segment store postgres: replication unsafe for failover")
	// ErrStandby: the server connected to is a standby (in recovery), which
	// cannot allocate.
	ErrStandby = errors.New("segment store postgres: connected to a standby")
)

// Replication is what a server says about itself, read on every new
// connection and before every allocation.
type Replication struct {
	// InRecovery: pg_is_in_recovery(), the server is a standby.
	InRecovery bool
	// SynchronousCommit and SynchronousStandbyNames are the session's
	// settings of those names.
	SynchronousCommit, SynchronousStandbyNames string
}

// replicationSQL reads Replication in one round trip.
const replicationSQL = `SELECT pg_is_in_recovery(), current_setting('synchronous_commit'), current_setting('synchronous_standby_names')`

// Synchronous reports whether a commit returns only once a synchronous
// standby has it on disk (on) or has applied it (remote_apply): then a
// promoted standby holds every range the old primary confirmed.
// remote_write is not enough (the standby may lose it in a crash of its
// own), nor are local and off, nor anything with no standby named.
func (r Replication) Synchronous() bool {
	return r.SynchronousStandbyNames != "" && (r.SynchronousCommit == "on" || r.SynchronousCommit == "remote_apply")
}

// why says what is unsafe; "" when nothing is.
func (r Replication) why() string {
	switch {
	case r.SynchronousStandbyNames == "":
		return "synchronous_standby_names is empty: commits do not wait for any standby"
	case !r.Synchronous():
		return "synchronous_commit is " + strconv.Quote(r.SynchronousCommit) +
			": commits do not wait until a standby has them on disk"
	}
	return ""
}

// ReplicationError says why a server was refused for allocation.
type ReplicationError struct {
	// Server is the host:port connected to.
	Server string
	// Hosts is how many servers the DSN names.
	Hosts int
	Replication
}

func (e *ReplicationError) Error() string {
	if e.InRecovery {
		return fmt.Sprintf("segment store postgres: %s is a standby (pg_is_in_recovery() is true) and cannot allocate ranges: "+
			"point segmentDSN at the primary, or name every server with target_session_attrs=read-write so that only the primary is used",
			e.Server)
	}
	return fmt.Sprintf("segment store postgres: refusing to allocate on %s: segmentDSN names %d servers, so the store may fail over to a standby, "+
		"but %s. A range allocated just before a failover can then be missing on the new primary, "+
		"which hands it out again: two instances would issue the same IDs. "+
		"Make replication synchronous (synchronous_commit = on or remote_apply, and synchronous_standby_names naming the standbys: docs/segment.md), "+
		"or accept the risk with %s: true",
		e.Server, e.Hosts, e.why(), segspec.AllowAsyncFailoverKey)
}

// Is matches ErrStandby or ErrUnsafeReplication.
func (e *ReplicationError) Is(target error) bool {
	if e.InRecovery {
		return target == ErrStandby
	}
	return target == ErrUnsafeReplication
}

// readReplication reads the server's replication state on conn.
func readReplication(ctx context.Context, conn *pgx.Conn) (Replication, error) {
	var r Replication
	err := conn.QueryRow(ctx, replicationSQL).Scan(&r.InRecovery, &r.SynchronousCommit, &r.SynchronousStandbyNames)
	if err != nil {
		return r, fmt.Errorf("segment store postgres: reading the replication settings: %w", err)
	}
	return r, nil
}

// checkReplication refuses a standby always and, when the DSN names
// several hosts, a primary that does not replicate synchronously unless
// allowed (then it is logged).
func (s *Store) checkReplication(ctx context.Context, conn *pgx.Conn) error {
	r, err := readReplication(ctx, conn)
	if err != nil {
		return err
	}
	server := serverOf(conn.PgConn())
	if r.InRecovery {
		return s.refused(&ReplicationError{Server: server, Hosts: s.hosts, Replication: r})
	}
	if s.hosts < 2 || r.Synchronous() {
		s.safe(server)
		return nil
	}
	if s.o.AllowAsyncFailover {
		if !s.asyncWarned.Swap(true) {
			s.o.Logger.Warn("segment store postgres: replication is asynchronous; allowed by "+segspec.AllowAsyncFailoverKey+
				": a failover can lose ranges the old primary handed out, and the new one hands them out again (duplicate IDs)",
				"server", server, "why", r.why())
		}
		return nil
	}
	return s.refused(&ReplicationError{Server: server, Hosts: s.hosts, Replication: r})
}

// refused counts and logs a refusal once the store has opened (at start
// the error is the caller's to report): once when refusals begin, not per
// attempt.
func (s *Store) refused(e *ReplicationError) error {
	s.refusals.Add(1)
	if s.opened.Load() && !s.refusing.Swap(true) {
		s.o.Logger.Error("segment store postgres: refusing allocations until the server is safe; the instances serve from their buffers, then fail",
			"err", e)
	}
	return e
}

// safe notes a server that may allocate, logging the end of refusals.
func (s *Store) safe(server string) {
	if s.refusing.Swap(false) {
		s.o.Logger.Info("segment store postgres: allocating again", "server", server)
	}
}

func serverOf(pc *pgconn.PgConn) string {
	if pc == nil {
		return "?"
	}
	c := pc.Conn()
	if c == nil {
		return "?"
	}
	return c.RemoteAddr().String()
}

// servers lists the distinct host:port a DSN names, in order: pgx spreads
// several hosts, and sslmode prefer or allow, over Fallbacks.
func servers(c *pgconn.Config) []string {
	list := []string{net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))}
	for _, f := range c.Fallbacks {
		if h := net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port))); !slices.Contains(list, h) {
			list = append(list, h)
		}
	}
	return list
}
