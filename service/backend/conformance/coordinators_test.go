package conformance_test

import (
	"context"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
	"github.com/vesta-go/vesta/service/backend/pgtest"
)

// The conformance suite runs every case against both coordinators, each
// through the real server-rest: what an operator does to the coordinator
// (delete a claim, restore a data dir) must never make an ID repeat.

var bg = context.Background()

// etcdEndpoint is the embedded etcd TestMain starts for the package.
var etcdEndpoint string

func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	code := etcdtest.Run(m, &etcdEndpoint)
	pgtest.StopShared()
	os.Exit(code)
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
	// lapseClaim ends machine's claim behind its holder's back, leaving
	// the trace that it was held (etcd: claimed/<id>; PostgreSQL: the row).
	lapseClaim(t *testing.T, prefix string, machine int64)
	// deleteMark deletes every mark of machine.
	deleteMark(t *testing.T, prefix string, machine int64)
	// wipe forgets the whole fleet: etcd deletes every key under the
	// prefix, PostgreSQL drops both tables (the next node recreates them).
	wipe(t *testing.T, prefix string)
	// snapshot copies the fleet's keys (rows) as a backup would; restore
	// puts the fleet back as it was then, whatever changed since, and
	// calls meanwhile (if not nil) once a node started then sees the
	// restored fleet (PostgreSQL: while the restore's locks are held, and
	// it commits once a claim waits on them).
	snapshot(t *testing.T, prefix string) (restore func(t *testing.T, meanwhile func()))
	// setMarks sets every mark of machine to ms.
	setMarks(t *testing.T, prefix string, machine, ms int64)
	// layout is the fleet's layout record as stored; layoutWhere names it
	// as the errors do.
	layout(t *testing.T, prefix string) string
	layoutWhere(prefix string) string
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

func (e etcdCoord) lapseClaim(t *testing.T, prefix string, machine int64) {
	e.deleteClaim(t, prefix, machine)
}

func (e etcdCoord) deleteMark(t *testing.T, prefix string, machine int64) {
	_, err := e.c.Delete(bg, prefix+"/marks/"+strconv.FormatInt(machine, 10))
	require.NoError(t, err)
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

func (p pgCoord) lapseClaim(t *testing.T, prefix string, machine int64) {
	_, err := p.conn.Exec(bg, `UPDATE vesta_machines SET expires_at = now() - interval '1 second' WHERE prefix = $1 AND machine = $2`, prefix, machine)
	require.NoError(t, err)
}

func (p pgCoord) deleteMark(t *testing.T, prefix string, machine int64) {
	_, err := p.conn.Exec(bg, `DELETE FROM vesta_machines_marks WHERE prefix = $1 AND machine = $2`, prefix, machine)
	require.NoError(t, err)
	_, err = p.conn.Exec(bg, `UPDATE vesta_machines SET mark_ms = 0 WHERE prefix = $1 AND machine = $2`, prefix, machine)
	require.NoError(t, err)
}

// start runs server-rest with the suite's defaults and args.
func start(t *testing.T, args ...string) *leasetest.Rest {
	t.Helper()
	return leasetest.StartRest(t, nil, append([]string{"--segment-store", "off", "--log-level", "info", "--etcd-dial-timeout", "1s"}, args...)...)
}

// issuing waits until r answers /genid, and returns the ID's machine.
func issuing(t *testing.T, r *leasetest.Rest, limit time.Duration) int64 {
	t.Helper()
	return intf.Id(r.FirstID(t, limit)).Fields().Machine
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

// issues waits until a node's Load has had IDs: the guard only ends a node
// that stopped answering.
func issues(t *testing.T, node string, issued func() int) {
	t.Helper()
	leasetest.Eventually(t, time.Minute, node+" issues under the load", func() bool { return issued() > 0 })
}
