package leasekit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/internal/etcdtest"
	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/pgtest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
)

// The conformance suite runs every case against both coordinators, each
// through the real server-rest: what an operator does to the coordinator
// (delete a claim, restore a data dir) must never make an ID repeat.

var bg = context.Background()

// etcdEndpoint is the embedded etcd TestMain starts for the package.
var etcdEndpoint string

func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer pgtest.StopShared()
	dir, err := os.MkdirTemp("", "vesta-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	e, err := etcdtest.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded etcd:", err)
		return 1
	}
	defer e.Close()
	etcdEndpoint = e.Clients[0].Addr().String()
	return m.Run()
}

// coordinator is one backend of the lease as a test sees it: the flags
// that make server-rest use it, and an operator's hands on it.
type coordinator interface {
	// args are server-rest's flags for the fleet prefix, through addr
	// (the coordinator's address, or a proxy's).
	args(prefix, addr string) []string
	addr() string
	// deleteClaim deletes machine's claim (a key, a row) as an operator would.
	deleteClaim(t *testing.T, prefix string, machine int64)
}

// each runs f against a fresh fleet of each coordinator, in parallel.
func each(t *testing.T, f func(t *testing.T, c coordinator, prefix string)) {
	for _, name := range []string{"etcd", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := "/" + strings.ReplaceAll(t.Name(), "/", "_")
			if name == "etcd" {
				f(t, newEtcd(t), prefix)
				return
			}
			f(t, newPostgres(t), prefix)
		})
	}
}

type etcdCoord struct{ c *clientv3.Client }

func newEtcd(t *testing.T) etcdCoord {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdEndpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return etcdCoord{c}
}

func (e etcdCoord) addr() string { return etcdEndpoint }

func (e etcdCoord) args(prefix, addr string) []string {
	return []string{"--machine-provider", "etcd", "--etcd-endpoints", addr, "--etcd-prefix", prefix}
}

func (e etcdCoord) deleteClaim(t *testing.T, prefix string, machine int64) {
	resp, err := e.c.Delete(bg, prefix+"/machines/"+strconv.FormatInt(machine, 10))
	require.NoError(t, err)
	require.Equal(t, int64(1), resp.Deleted, "the key was there")
}

type pgCoord struct {
	dsn  string
	conn *pgx.Conn
}

func newPostgres(t *testing.T) pgCoord {
	dsn, err := pgtest.Shared(t).NewSchema(bg)
	require.NoError(t, err)
	c, err := pgx.Connect(bg, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(bg) })
	return pgCoord{dsn, c}
}

func (p pgCoord) addr() string {
	u, _ := url.Parse(p.dsn)
	return u.Host
}

func (p pgCoord) args(prefix, addr string) []string {
	u, _ := url.Parse(p.dsn)
	u.Host = addr
	return []string{"--machine-provider", "postgres", "--machine-dsn", u.String(), "--etcd-prefix", prefix}
}

func (p pgCoord) deleteClaim(t *testing.T, prefix string, machine int64) {
	tag, err := p.conn.Exec(bg, `DELETE FROM vesta_machines WHERE prefix = $1 AND machine = $2`, prefix, machine)
	require.NoError(t, err)
	require.Equal(t, int64(1), tag.RowsAffected(), "the row was there")
}

// node is one run of server-rest.
type node struct {
	cmd    *exec.Cmd
	base   string
	logs   *syncbuf.Buffer
	waited chan struct{}
	err    error // the exit, once waited is closed
}

// start runs server-rest with args on a new port; the test's end stops it.
func start(t *testing.T, args ...string) *node {
	t.Helper()
	listen := etcdtest.FreeURL().Host
	n := &node{base: "http://" + listen, logs: &syncbuf.Buffer{}, waited: make(chan struct{})}
	n.cmd = exec.Command(testbin.Must(t, "github.com/vesta-go/vesta/server-rest"),
		append([]string{"--listen", listen, "--segment-store", "off", "--log-level", "info", "--etcd-dial-timeout", "1s"}, args...)...)
	n.cmd.Stdout, n.cmd.Stderr = io.Discard, io.MultiWriter(leasetest.Writer(t), n.logs)
	require.NoError(t, n.cmd.Start())
	go func() {
		n.err = n.cmd.Wait()
		close(n.waited)
	}()
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(syscall.SIGCONT)
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.waited:
		case <-time.After(20 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.waited
		}
	})
	return n
}

func (n *node) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	require.NoError(t, n.cmd.Process.Signal(s))
	if s == syscall.SIGKILL {
		<-n.waited
	}
}

func (n *node) exited() bool {
	select {
	case <-n.waited:
		return true
	default:
		return false
	}
}

// get is GET path's status and body (status 0 when the request failed).
func (n *node) get(path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(n.base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// issuing waits until n answers /genid, and returns the ID's machine.
func (n *node) issuing(t *testing.T, limit time.Duration) int64 {
	t.Helper()
	var id int64
	leasetest.Eventually(t, limit, "/genid answers 200", func() bool {
		require.False(t, n.exited(), "server-rest exited: %v\n%s", n.err, n.logs.String())
		code, body := n.get("/genid")
		id, _ = strconv.ParseInt(strings.TrimSpace(body), 10, 64)
		return code == http.StatusOK
	})
	f, _ := intf.Decode(id)
	return f.Machine
}

// load asks n for batches of IDs until stop is closed; done returns them
// with the time of the last batch.
func (n *node) load(stop chan struct{}) (done func() ([]int64, time.Time)) {
	var mu sync.Mutex
	var ids []int64
	var last time.Time
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, body := n.get("/genid?count=10000")
			if code != http.StatusOK {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			batch := make([]int64, 0, 10000)
			for _, f := range strings.Fields(strings.ReplaceAll(body, ",", " ")) {
				if id, err := strconv.ParseInt(f, 10, 64); err == nil {
					batch = append(batch, id)
				}
			}
			mu.Lock()
			ids, last = append(ids, batch...), time.Now()
			mu.Unlock()
		}
	}()
	return func() ([]int64, time.Time) {
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return ids, last
	}
}

// noDuplicate fails t if an ID appears twice among the lists.
func noDuplicate(t *testing.T, lists ...[]int64) int {
	t.Helper()
	all := slices.Concat(lists...)
	slices.Sort(all)
	dups := 0
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
		}
	}
	require.Zero(t, dups, "IDs issued twice among %d", len(all))
	return len(all)
}

// proxy is a cuttable proxy in front of c.
func proxy(t *testing.T, c coordinator) *nettest.Proxy { return nettest.NewProxy(t, c.addr()) }
