package etcdlease_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/internal/leasekit"
	"github.com/vesta-go/vesta/service/machineid"
)

var bg = context.Background()

// testTTL is the lease TTL of most tests: short, so that the failure cases
// run in seconds.
const testTTL = 3 * time.Second

// prefixOf gives each test its own key prefix, new for every run of the
// test (-count reruns it against the same etcd).
func prefixOf(t testing.TB) string {
	p, _ := prefixes.LoadOrStore(t, fmt.Sprintf("/t/%s/%d", strings.ReplaceAll(t.Name(), "/", "_"), runs.Add(1)))
	return p.(string)
}

var (
	prefixes sync.Map // testing.TB → its prefix
	runs     atomic.Int64
)

// testLog is a slog logger writing to t.Log until the test's cleanups are
// over (a log line after that would panic).
func testLog(t testing.TB) *slog.Logger { return leasetest.Log(t) }

// node is one generator of a test: its lease options and service.
type node struct {
	name  string
	lease *etcdlease.Lease
	svc   *service.Service
}

// newLease builds a Lease on the test etcd (or endpoint, when given) with
// testTTL, the test's prefix and node name name.
func newLease(t testing.TB, name string, edit ...func(*etcdlease.Options)) *etcdlease.Lease {
	t.Helper()
	o := etcdlease.Options{
		Endpoints: []string{etcdEndpoint},
		Common:    etcdlease.Common{Prefix: prefixOf(t), TTL: testTTL, NodeName: name, Logger: testLog(t).With("node", name)},
	}
	etcdlease.ClaimLowestFirst(true)(&o) // predictable ids; a test may turn it off
	for _, e := range edit {
		e(&o)
	}
	l, err := etcdlease.New(o)
	require.NoError(t, err)
	return l
}

// settings are a node's service settings: no data dir, so only the etcd
// mark protects its machine id.
func settings(t testing.TB, lease machineid.Lease, name string) service.Settings {
	return service.Settings{Lease: lease, NoDataDir: true, Logger: testLog(t).With("node", name)}
}

// startNode starts a service on a new Lease and closes it when the test
// ends.
func startNode(t testing.TB, name string, edit ...func(*etcdlease.Options)) *node {
	t.Helper()
	n := &node{name: name, lease: newLease(t, name, edit...)}
	n.svc = startService(t, settings(t, n.lease, name))
	return n
}

func startService(t testing.TB, s service.Settings) *service.Service {
	t.Helper()
	svc, err := service.New(bg, s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// withEndpoint points a lease at another address (a proxy).
func withEndpoint(addr string) func(*etcdlease.Options) {
	return func(o *etcdlease.Options) { o.Endpoints = []string{addr} }
}

// firstID is the first ID of a node that has just taken an id over. The
// service may refuse it for an instant: when Hold had to wait for the
// previous holder's mark, the validity Hold was given can be stale until
// the lease extends it right after Hold returns (see docs/operations.md).
func firstID(t testing.TB, svc *service.Service) int64 {
	t.Helper()
	var id intf.Id
	eventually(t, leasekit.RenewInterval(testTTL), "the new holder issues", func() bool {
		var err error
		id, err = svc.GenId(bg)
		require.True(t, err == nil || errors.Is(err, intf.ErrFenced), "only an instant of fencing: %v", err)
		return err == nil
	})
	return int64(id)
}

// timeUnit is the time field of id.
func timeUnit[T intf.Id | int64](id T) int64 {
	l, _ := intf.IdType(id >> 62 & 1).Layout()
	return l.Time.Get(uint64(id))
}

// machineOf is the machine field of id.
func machineOf[T intf.Id | int64](id T) int64 {
	l, _ := intf.MaxPeak.Layout()
	return l.Machine.Get(uint64(id))
}

// unitOfMs is the time unit of Unix millisecond ms in layout t.
func unitOfMs(t intf.IdType, ms int64) int64 {
	l, _ := t.Layout()
	return (ms - intf.DefaultEpochMillis) / l.Unit.Milliseconds()
}
