package etcdlease_test

import (
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// TestServerRestWithEtcd builds the real server-rest and runs it with
// provider etcd, configured by flags alone.
func TestServerRestWithEtcd(t *testing.T) {
	t.Parallel()
	bin := buildServerRest(t)
	listen := freeURL().Host
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	srv, exited := startServerRest(t, bin, "--machine-provider", "etcd", "--etcd-endpoints", rangesEndpoint,
		"--etcd-prefix", keys.Prefix, "--etcd-lease-ttl", "2s", "--etcd-node-name", "rest-e2e", "--machine-range", "200-200",
		"--listen", listen, "--no-data-dir=true", "--log-level", "warn")

	var id int64
	eventually(t, 30*time.Second, "/genid answers 200", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("server-rest exited: %v", err)
		default:
		}
		resp, err := http.Get("http://" + listen + "/genid")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return false
		}
		id, err = strconv.ParseInt(string(body), 10, 64)
		return err == nil
	})
	c := rangesClient(t)
	owner, lease, held := get(t, c, keys.Machine(200))
	require.True(t, held, "server-rest holds machine 200, the only id of its range, in etcd")
	assert.Equal(t, "rest-e2e", owner)
	assert.NotZero(t, lease, "the machine key is attached to a lease")
	assert.Equal(t, int64(200), machineOf(id))

	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		assert.NoError(t, err, "a clean exit")
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not stop on SIGTERM")
	}
	_, _, held = get(t, c, keys.Machine(200))
	assert.False(t, held, "a graceful stop releases the id")
	assert.GreaterOrEqual(t, markOf(t, c, keys, 200), intf.DefaultEpochMillis+timeUnit(id)*1000, "the mark covers the IDs issued")
}

// buildServerRest is the real server-rest, built once per source state
// and shared with the other packages of the run (internal/testbin).
func buildServerRest(t *testing.T) string {
	t.Helper()
	return testbin.Must(t, "github.com/vesta-go/vesta/server-rest")
}

// httpStatus is the status code of GET url and the body, or 0 when the
// request failed.
func httpStatus(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metricValue is the value of an unlabelled gauge in a /metrics page, or
// "" when it is missing.
func metricValue(page, name string) string { return leasetest.MetricValue(page, name) }

// TestServerRestFencedIsNotReady runs the real server-rest against etcd
// through a proxy, cuts etcd off for longer than the lease and checks that
// /readyz, vesta_ready and vesta_machine_lease_held say fenced whenever
// /genid is refused for want of a lease, and ready again once it issues.
//
// Stress only: a real server-rest cut off from etcd for longer than its
// lease. A plain run covers readiness following the lease by restserver's
// TestReadyzFollowsTheLease and server-rpc's TestAdminReadyzFenced, and the
// fencing by TestCutHolderIsFencedBeforeItsLeaseExpires.
func TestServerRestFencedIsNotReady(t *testing.T) {
	stresstest.Only(t, "a real server-rest cut off from etcd past its lease TTL")
	t.Parallel()
	bin := buildServerRest(t)
	px := newProxy(t, etcdEndpoint)
	listen := freeURL().Host
	startServerRest(t, bin, "--machine-provider", "etcd", "--etcd-endpoints", px.Addr(),
		"--etcd-prefix", prefixOf(t), "--etcd-lease-ttl", "2s", "--etcd-node-name", "rest-fenced",
		"--listen", listen, "--no-data-dir=true", "--log-level", "warn")
	base := "http://" + listen
	state := func() (genid, readyz int, ready, held string) {
		genid, _ = httpStatus(base + "/genid")
		readyz, _ = httpStatus(base + "/readyz")
		_, page := httpStatus(base + "/metrics")
		return genid, readyz, metricValue(page, "vesta_ready"), metricValue(page, "vesta_machine_lease_held")
	}
	serving := func() bool {
		g, r, ready, held := state()
		return g == http.StatusOK && r == http.StatusOK && ready == "1" && held == "1"
	}
	eventually(t, 30*time.Second, "issuing and ready", serving)

	px.Cut()
	eventually(t, 20*time.Second, "/genid refused while etcd is cut off", func() bool {
		g, _ := httpStatus(base + "/genid")
		return g == http.StatusServiceUnavailable
	})
	// From the first refusal on, the node is fenced until etcd is back:
	// every health signal must say so at once.
	for range 5 {
		g, r, ready, held := state()
		assert.Equal(t, http.StatusServiceUnavailable, g, "/genid")
		assert.Equal(t, http.StatusServiceUnavailable, r, "/readyz while fenced")
		assert.Equal(t, "0", ready, "vesta_ready while fenced")
		assert.Equal(t, "0", held, "vesta_machine_lease_held while fenced")
		time.Sleep(100 * time.Millisecond)
	}
	_, body := httpStatus(base + "/readyz")
	assert.Contains(t, body, "fenced")

	px.Restore()
	eventually(t, 30*time.Second, "issuing and ready again after etcd is back", serving)
}

// TestServerRestSkipsAnIdWhoseMarkIsFarAhead runs the real server-rest
// against etcd where machine 300's stored mark is an hour ahead of the
// clock (a clock that once ran fast, say), on the range 300-301: the node
// passes 300 over (gives it back if it claimed it) and takes 301, rather
// than refusing to start or waiting an hour.
func TestServerRestSkipsAnIdWhoseMarkIsFarAhead(t *testing.T) {
	t.Parallel()
	bin := buildServerRest(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	c := rangesClient(t)
	_, err := c.Put(bg, keys.Mark(300), strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	require.NoError(t, err)
	listen := freeURL().Host
	_, exited := startServerRest(t, bin, "--machine-provider", "etcd", "--etcd-endpoints", rangesEndpoint,
		"--etcd-prefix", keys.Prefix, "--etcd-lease-ttl", "2s", "--etcd-node-name", "rest-ahead", "--machine-range", "300-301",
		"--listen", listen, "--no-data-dir=true", "--segment-store", "off", "--log-level", "warn")
	var id int64
	eventually(t, 30*time.Second, "/genid answers 200", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("server-rest exited: %v", err)
		default:
		}
		code, body := httpStatus("http://" + listen + "/genid")
		if code != http.StatusOK {
			return false
		}
		id, err = strconv.ParseInt(strings.TrimSpace(body), 10, 64)
		return err == nil
	})
	assert.Equal(t, int64(301), machineOf(id), "machine 300 was passed over for its mark")
	_, _, held := get(t, c, keys.Machine(300))
	assert.False(t, held, "machine 300 is not held")
}

// startServerRest starts the real server-rest with args, its log going to
// the test's log, and kills it at the end of the test. exited receives
// its exit.
func startServerRest(t *testing.T, bin string, args ...string) (*exec.Cmd, chan error) {
	t.Helper()
	srv := exec.Command(bin, args...)
	srv.Stdout, srv.Stderr = io.Discard, leasetest.Writer(t)
	require.NoError(t, srv.Start())
	exited, waited := make(chan error, 1), make(chan struct{})
	go func() {
		exited <- srv.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-waited
	})
	return srv, exited
}
