package pgtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ClusterOptions shape a replicated cluster.
type ClusterOptions struct {
	// Sync makes the standby synchronous (synchronous_standby_names '*',
	// synchronous_commit on), and gives it a cascading standby of its own
	// that becomes its synchronous standby once it is promoted, so that
	// the new primary replicates synchronously too. Without it the
	// standby is asynchronous and alone.
	Sync bool
}

// Cluster is a primary with a standby cloned from it by pg_basebackup -R,
// each on its own random 127.0.0.1 port in its own temp directory; with
// Sync a third server streams from the standby (a cascade). fsync is off
// (a process crash, pg_ctl stop -m immediate, loses nothing the kernel
// had); full_page_writes stays on, which a base backup from a standby
// needs.
type Cluster struct {
	Primary, Standby *Server
	// Cascade streams from Standby (Sync only; nil otherwise).
	Cascade *Server
}

// StartCluster starts a primary and clones its standby (and with Sync the
// cascade). ErrNoPostgres when the binaries are missing.
func StartCluster(ctx context.Context, o ClusterOptions) (_ *Cluster, err error) {
	c := &Cluster{}
	defer func() {
		if err != nil {
			_ = c.Destroy()
		}
	}()
	if c.Primary, err = newServer(); err != nil {
		return nil, err
	}
	c.Primary.serverOpts += replicaOpts
	if err = c.Primary.initData(ctx); err != nil {
		return nil, err
	}
	if err = c.Primary.Restart(ctx); err != nil {
		return nil, err
	}
	if o.Sync {
		// In postgresql.auto.conf, which the base backups copy: the
		// standby, once promoted, waits for its own cascade.
		if err = c.Primary.Exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = '*'`,
			`ALTER SYSTEM SET synchronous_commit = 'on'`, `SELECT pg_reload_conf()`); err != nil {
			return nil, err
		}
	}
	if c.Standby, err = c.Primary.CloneStandby(ctx); err != nil {
		return nil, err
	}
	if o.Sync {
		if c.Cascade, err = c.Standby.CloneStandby(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// replicaOpts are the settings of a cluster's servers beyond a plain one's.
const replicaOpts = " -c fsync=off -c wal_level=replica -c max_wal_senders=10 -c wal_keep_size=64MB"

// CloneStandby makes a standby of s: pg_basebackup -R (standby.signal and
// primary_conninfo pointing at s) into a new temp directory, started on
// its own port. s may itself be a standby (the clone then cascades).
func (s *Server) CloneStandby(ctx context.Context) (*Server, error) {
	st, err := newServer()
	if err != nil {
		return nil, err
	}
	st.serverOpts += replicaOpts
	if _, err := st.run(ctx, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-U", "postgres",
		"-D", st.data, "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
		_ = st.Destroy()
		return nil, err
	}
	if err := st.Restart(ctx); err != nil {
		_ = st.Destroy()
		return nil, err
	}
	return st, nil
}

// StopImmediate stops the server as a crash would (pg_ctl stop -m
// immediate: no checkpoint, connections cut).
func (s *Server) StopImmediate(ctx context.Context) error {
	_, err := s.run(ctx, "pg_ctl", "-D", s.data, "-m", "immediate", "-w", "-t", "60", "stop")
	return err
}

// Promote turns a standby into a primary (pg_ctl promote) and waits until
// it accepts writes.
func (s *Server) Promote(ctx context.Context) error {
	_, err := s.run(ctx, "pg_ctl", "-D", s.data, "-w", "-t", "60", "promote")
	return err
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Exec runs statements, one at a time, in the database postgres.
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(context.Background())
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("pgtest: %s: %w", q, err)
		}
	}
	return nil
}

// DSN is a URL naming the primary, then the standby, for database db, with
// target_session_attrs=read-write: a client connects to whichever is the
// primary.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s,%s/%s?sslmode=disable&target_session_attrs=read-write",
		c.Primary.Addr(), c.Standby.Addr(), db)
}

// Servers lists the cluster's servers, primary first.
func (c *Cluster) Servers() []*Server {
	var l []*Server
	for _, s := range []*Server{c.Primary, c.Standby, c.Cascade} {
		if s != nil {
			l = append(l, s)
		}
	}
	return l
}

// Destroy stops every server and removes their directories.
func (c *Cluster) Destroy() error {
	var errs []error
	for _, s := range c.Servers() {
		errs = append(errs, s.Destroy())
	}
	return errors.Join(errs...)
}

// Logs returns the tail of each server's log, for a failing test.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for i, s := range c.Servers() {
		fmt.Fprintf(&b, "--- server %d (%s) ---\n%s\n", i, s.Addr(), s.logTail())
	}
	return b.String()
}
