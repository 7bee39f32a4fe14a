package etcdlease_test

import (
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
)

// etcdEndpoint is the client address of the embedded etcd that TestMain
// starts for the whole package; each test works under its own prefix.
var etcdEndpoint string

// rangesEndpoint is a second one, for the tests whose fleets have a
// machineRange: a node without one is refused while another prefix's range
// is registered, and the package's other tests have none.
var rangesEndpoint string

// onRangesEtcd points a lease at the etcd of the tests with ranges.
func onRangesEtcd(o *etcdlease.Options) { o.Endpoints = []string{rangesEndpoint} }

// rangesClient is the test's hands on the etcd of the tests with ranges.
func rangesClient(t *testing.T) *clientv3.Client { return clientOf(t, rangesEndpoint) }

// twoEtcds runs the tests with rangesEndpoint's etcd started too.
type twoEtcds struct{ m *testing.M }

func (w twoEtcds) Run() int { return etcdtest.Run(w.m, &rangesEndpoint) }

// TestMain lets up to 8 tests run at once (unless -parallel says
// otherwise): they wait on lease TTLs, etcd and server processes, not on
// the CPU.
func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	os.Exit(etcdtest.Run(twoEtcds{m}, &etcdEndpoint))
}

// freeURL is a loopback URL free a moment ago.
func freeURL() url.URL { return etcdtest.FreeURL() }

// etcdClient is a second client, the test's hands on etcd.
func etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdEndpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get returns the value of key and its lease; ok is false if absent.
func get(t testing.TB, c *clientv3.Client, key string) (value string, lease int64, ok bool) {
	t.Helper()
	resp, err := c.Get(bg, key)
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return "", 0, false
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].Lease, true
}

// markOf reads machine's stored mark (Unix ms).
func markOf(t testing.TB, c *clientv3.Client, keys etcdlease.Keys, machine int64) int64 {
	t.Helper()
	v, _, ok := get(t, c, keys.Mark(machine))
	require.True(t, ok, "mark of machine %d stored", machine)
	ms, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err)
	return ms
}

// leaseOf is the etcd lease machine's key is attached to.
func leaseOf(t testing.TB, c *clientv3.Client, keys etcdlease.Keys, machine int64) clientv3.LeaseID {
	t.Helper()
	_, lease, ok := get(t, c, keys.Machine(machine))
	require.True(t, ok, "machine %d held", machine)
	return clientv3.LeaseID(lease)
}

// eventually polls cond every few milliseconds for up to limit.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	leasetest.Eventually(t, limit, what, cond)
}
