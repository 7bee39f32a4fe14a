package pglease_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/pglease"
	"github.com/vesta-go/vesta/service/backend/pgtest"
	"github.com/vesta-go/vesta/service/machineid"
)

// TestMain lets up to 8 tests run at once (unless -parallel says
// otherwise: they wait on claim TTLs and the database, not on the CPU) and
// stops the package's one PostgreSQL server (started by the first test
// that needs it) after the tests.
func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

var bg = context.Background()

// testTTL is the claim TTL of most tests: short, so that the failure
// cases run in seconds.
const testTTL = 3 * time.Second

// newDSN is a DSN of the shared server whose tables are the test's own
// (a fresh schema).
func newDSN(t testing.TB) string {
	t.Helper()
	dsn, err := pgtest.Shared(t).NewSchema(bg)
	require.NoError(t, err)
	return dsn
}

// viaProxy is dsn with its host:port replaced by addr.
func viaProxy(t testing.TB, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.Host = addr
	return u.String()
}

// hostOf is the host:port of dsn.
func hostOf(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	return u.Host
}

// db is the test's own connection to dsn, to look at and change the
// table behind the nodes' backs.
func db(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(bg, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(bg) })
	return c
}

// row is a claim as the table holds it.
type row struct {
	holder string
	token  int64
	live   bool // expires_at >= now()
	markMs int64
}

func rowOf(t testing.TB, c *pgx.Conn, machine int64) (row, bool) {
	t.Helper()
	var r row
	err := c.QueryRow(bg, `SELECT holder, token, expires_at >= now(), mark_ms FROM vesta_machines WHERE prefix = $1 AND machine = $2`,
		pglease.DefaultPrefix, machine).Scan(&r.holder, &r.token, &r.live, &r.markMs)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false
	}
	require.NoError(t, err)
	return r, true
}

// testLog writes to t.Log until the test's cleanups are over.
func testLog(t testing.TB) *slog.Logger { return leasetest.Log(t) }

// newLease is a Lease on dsn with testTTL and node name name, claiming
// the lowest free id.
func newLease(t testing.TB, dsn, name string, edit ...func(*pglease.Options)) *pglease.Lease {
	t.Helper()
	o := pglease.Options{DSN: dsn, Common: pglease.Common{TTL: testTTL, NodeName: name, Logger: testLog(t).With("node", name)}}
	pglease.ClaimLowestFirst(&o)
	for _, e := range edit {
		e(&o)
	}
	l, err := pglease.New(o)
	require.NoError(t, err)
	return l
}

func withRange(first, last int64) func(*pglease.Options) {
	return func(o *pglease.Options) { o.MachineRange = &pglease.Range{First: first, Last: last} }
}

// startNode starts a service (no data dir) on a new Lease and closes it
// when the test ends.
func startNode(t testing.TB, dsn, name string, edit ...func(*pglease.Options)) (*service.Service, *pglease.Lease) {
	t.Helper()
	l := newLease(t, dsn, name, edit...)
	svc, err := service.New(bg, service.Settings{Lease: l, NoDataDir: true, Logger: testLog(t).With("node", name)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	return svc, l
}

// eventually polls cond every few milliseconds for up to limit.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	leasetest.Eventually(t, limit, what, cond)
}

// machineOf is the machine field of id.
func machineOf[T intf.Id | int64](id T) int64 {
	l, _ := intf.MaxPeak.Layout()
	return l.Machine.Get(uint64(id))
}

// timeUnit is the time field of id (max-peak: seconds since the epoch).
func timeUnit[T intf.Id | int64](id T) int64 {
	l, _ := intf.MaxPeak.Layout()
	return l.Time.Get(uint64(id))
}

// fakeHolder is a machineid.Holder without a service: it accepts every hold,
// and keeps the lease state saved, so that a test can crash a lease (a
// release it cannot record is not made) and resume it in another.
type fakeHolder struct {
	mu        sync.Mutex
	state     []byte // what the next run reads
	saved     []byte // the latest state saved
	failSaves bool   // SaveLeaseState fails: the lease cannot record a release
	machine   int64
	lease     machineid.Lease // set by run
	held      chan int64
	lost      atomic.Int64
}

func newFakeHolder(state []byte) *fakeHolder {
	return &fakeHolder{state: state, machine: -1, held: make(chan int64, 16)}
}

func (f *fakeHolder) Now() int64 { return time.Now().UnixNano() }

func (f *fakeHolder) Lead() time.Duration { return 3 * time.Second }

func (f *fakeHolder) Layout() machineid.Layout {
	return machineid.Layout{EpochMillis: intf.DefaultEpochMillis}
}

// Hold stores a mark up to the validity, as the service does.
func (f *fakeHolder) Hold(ctx context.Context, machine, validUntil, _ int64) error {
	if err := f.lease.StoreMark(ctx, machine, validUntil/int64(time.Millisecond)); err != nil {
		return err
	}
	f.mu.Lock()
	f.machine = machine
	f.mu.Unlock()
	f.held <- machine
	return nil
}
func (f *fakeHolder) Renewed(int64)      {}
func (f *fakeHolder) Lost()              { f.lost.Add(1) }
func (f *fakeHolder) LeaseState() []byte { return f.state }
func (f *fakeHolder) SaveLeaseState(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSaves {
		return fmt.Errorf("the test refuses to save")
	}
	f.saved = append([]byte(nil), b...)
	return nil
}

func (f *fakeHolder) lastSaved() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.saved
}

// savedValidity reads ValidUntil from a saved lease state.
func savedValidity(t testing.TB, state []byte) int64 {
	t.Helper()
	var st struct {
		ValidUntil int64 `json:"validUntil"`
	}
	require.NoError(t, json.Unmarshal(state, &st))
	return st.ValidUntil
}
