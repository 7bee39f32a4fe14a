package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPostgres: no initdb/pg_ctl was found.
var ErrNoPostgres = errors.New("pgtest: no PostgreSQL binaries (initdb, pg_ctl) in PATH or /usr/lib/postgresql/*/bin")

// Options tune the server.
type Options struct {
	// Fsync keeps fsync on (for benchmarks); tests run faster without it.
	Fsync bool
}

// Server is a running (or stopped) throw-away PostgreSQL server.
type Server struct {
	bin, dir, data, sock, logFile string
	port                          int
	runAs                         string // "postgres" when we are root
	serverOpts                    string
	dbs                           atomic.Int64
}

// FindBin returns the directory holding initdb and pg_ctl.
func FindBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			// A link in PATH (/usr/local/bin/pg_ctl) stands for the
			// installation's bin directory, which has the other tools
			// (pg_basebackup) too.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // newest major first
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Start makes a fresh cluster in a new temp directory (initData) and
// starts the server.
func Start(ctx context.Context, o Options) (*Server, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	if !o.Fsync {
		s.serverOpts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if err := s.initData(ctx); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.Restart(ctx); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, err
	}
	return s, nil
}

// newServer makes the temp directory of a server and picks its port; the
// data directory is the caller's to fill.
func newServer() (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vesta-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "sock"),
		logFile: filepath.Join(dir, "server.log")}
	if err := s.prepare(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if s.port, err = freePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.serverOpts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", s.port, s.sock)
	return s, nil
}

// prepare makes the socket dir and, as root, hands the directory to the
// postgres user.
func (s *Server) prepare() error {
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("pgtest: running as root needs a postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range []string{s.dir, s.sock} {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	s.runAs = u.Username
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run runs a PostgreSQL binary, as the postgres user when we are root.
func (s *Server) run(ctx context.Context, name string, args ...string) (string, error) {
	argv := append([]string{filepath.Join(s.bin, name)}, args...)
	if s.runAs != "" {
		argv = append([]string{"runuser", "-u", s.runAs, "--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("pgtest: %s: %w\n%s%s", strings.Join(argv, " "), err, out, s.logTail())
	}
	return string(out), nil
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(s.logFile)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "server log (tail):\n" + string(b)
}

// Restart starts the server (again, after Stop) on the same port.
func (s *Server) Restart(ctx context.Context) error {
	_, err := s.run(ctx, "pg_ctl", "-D", s.data, "-l", s.logFile, "-w", "-t", "60", "-o", s.serverOpts, "start")
	return err
}

// CrashRestart restarts the server as after a crash (pg_ctl restart -m
// immediate: connections cut, no checkpoint), on the same port.
func (s *Server) CrashRestart(ctx context.Context) error {
	_, err := s.run(ctx, "pg_ctl", "-D", s.data, "-l", s.logFile, "-m", "immediate", "-w", "-t", "60", "-o", s.serverOpts, "restart")
	return err
}

// Stop stops the server quickly (open connections are cut), keeping the
// data for Restart.
func (s *Server) Stop(ctx context.Context) error {
	_, err := s.run(ctx, "pg_ctl", "-D", s.data, "-m", "fast", "-w", "-t", "60", "stop")
	return err
}

// Destroy stops the server if it runs and removes its directory.
func (s *Server) Destroy() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = s.run(ctx, "pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
	return os.RemoveAll(s.dir)
}

// DSN is the connection string of database db.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewSchema creates a fresh schema in the database postgres and returns a
// DSN whose connections use it (search_path): tables made through it are
// the test's own, as in a fresh database, for a thousandth of the cost of
// CREATE DATABASE (which copies a template: 0.1-0.3 s).
func (s *Server) NewSchema(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", fmt.Errorf("pgtest: creating schema %s: %w", name, err)
	}
	return s.DSN("postgres") + "&search_path=" + name, nil
}

// NewDatabase creates a fresh database and returns its DSN.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	return s.DSN(name), nil
}
