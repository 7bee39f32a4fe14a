package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/vesta-go/vesta/service/backend/pgrepl"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// Replication errors (service/backend/pgrepl: the machine lease checks
// its database with the same code). A *ReplicationError matches one.
var (
	// ErrUnsafeReplication: the DSN names several hosts (a failover may
	// move the store to another server) but the primary does not confirm
	// commits on a standby, so a range it handed out can be lost in the
	// failover and handed out again by the new primary.
	ErrUnsafeReplication = pgrepl.ErrUnsafe
	// ErrStandby: the server connected to is a standby (in recovery), which
	// cannot allocate.
	ErrStandby = pgrepl.ErrStandby
)

// Replication is what a server says about itself, read on every new
// connection and before every allocation.
type Replication = pgrepl.Replication

// ReplicationError says why a server was refused for allocation.
type ReplicationError = pgrepl.Error

// policy is the store's replication check: segmentDSN, refused unless
// segmentAllowAsyncFailover.
func (s *Store) policy(hosts int) *pgrepl.Policy {
	return &pgrepl.Policy{Who: "segment store postgres", DSNKey: "segmentDSN", AllowKey: segspec.AllowAsyncFailoverKey,
		Does: "allocate", Lost: "A range allocated just before a failover", Hosts: hosts, Allow: s.o.AllowAsyncFailover, Logger: s.o.Logger}
}

// checkReplication refuses a standby always and, when the DSN names
// several hosts, a primary that does not replicate synchronously unless
// allowed (then it is logged).
func (s *Store) checkReplication(ctx context.Context, conn *pgx.Conn) error {
	err := s.repl.Check(ctx, conn)
	var re *ReplicationError
	if errors.As(err, &re) {
		return s.refused(re)
	}
	if err == nil {
		s.safe(pgrepl.ServerOf(conn.PgConn()))
	}
	return err
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

// servers lists the distinct host:port a DSN names.
var servers = pgrepl.Servers
