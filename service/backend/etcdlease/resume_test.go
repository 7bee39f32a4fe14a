package etcdlease_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// These tests kill the real server-rest with SIGKILL (a crash: nothing
// revoked, nothing released) and restart it on the same data dir, where
// the lease saved its state (lease.state).

// startRest starts server-rest with args (leasetest.Rest).
func startRest(t *testing.T, args ...string) *leasetest.Rest {
	return leasetest.StartRest(t, nil, args...)
}

// etcdArgs are the flags of a server-rest with provider etcd on the data
// dir dir.
func etcdArgs(endpoint, prefix, ttl, node, dir string, more ...string) []string {
	return append([]string{"--machine-provider", "etcd", "--etcd-endpoints", endpoint, "--etcd-prefix", prefix,
		"--etcd-lease-ttl", ttl, "--etcd-node-name", node, "--etcd-dial-timeout", "1s",
		"--data-dir", dir, "--segment-store", "off", "--log-level", "info"}, more...)
}

// savedLease is the part of the lease state in the data dir the tests
// read (see etcdlease's state.go).
type savedLease struct {
	Lease        int64 `json:"lease"`
	Machine      int64 `json:"machine"`
	StoredMarkMs int64 `json:"storedMarkMs"`
	ValidUntil   int64 `json:"validUntil"` // Unix ns
}

func readSavedLease(t *testing.T, dir string) savedLease {
	t.Helper()
	st, err := parseSavedLease(dir)
	require.NoError(t, err, "the lease state is kept in the data dir")
	return st
}

// parseSavedLease reads the lease state in dir: a line naming the
// directory (the service's), then the lease's JSON.
func parseSavedLease(dir string) (savedLease, error) {
	var st savedLease
	b, err := os.ReadFile(filepath.Join(dir, "lease.state"))
	if err != nil {
		return st, err
	}
	_, body, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return st, fmt.Errorf("no header line in %q", b)
	}
	return st, json.Unmarshal(body, &st)
}

// awaitSaved waits until the lease state in dir holds lease: the lease
// saves it just after the service starts issuing, and a crash before that
// leaves nothing to resume.
func awaitSaved(t *testing.T, dir string, lease clientv3.LeaseID) {
	t.Helper()
	eventually(t, 10*time.Second, "the lease state saved in the data dir", func() bool {
		st, err := parseSavedLease(dir)
		return err == nil && st.Lease == int64(lease)
	})
}

// idsAbove requires every ID of after to lie above every ID of before.
func idsAbove(t *testing.T, before, after []int64) {
	t.Helper()
	maxBefore, minAfter := before[0], after[0]
	for _, id := range before {
		maxBefore = max(maxBefore, id)
	}
	for _, id := range after {
		minAfter = min(minAfter, id)
	}
	assert.Greater(t, minAfter, maxBefore, "every ID after the restart lies above every ID before")
}

func TestKilledNodeResumesItsIdAndLease(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	dir := t.TempDir()
	a := startRest(t, etcdArgs(etcdEndpoint, keys.Prefix, "10s", "r1", dir)...)
	a.FirstID(t, 30*time.Second)
	before := a.Issue(t, 20)
	m := machineOf(before[0])
	lease := leaseOf(t, c, keys, m)
	leasetest.MetricReaches(t, a.Metric, "vesta_machine_lease_claims_total", "1")
	assert.Equal(t, "0", a.Metric("vesta_machine_lease_resumes_total"))
	awaitSaved(t, dir, lease)

	a.Signal(t, syscall.SIGKILL)
	// Another node name, as the default hostname-pid would give.
	restarted := time.Now()
	b := startRest(t, etcdArgs(etcdEndpoint, keys.Prefix, "10s", "r2", dir)...)
	first := b.FirstID(t, 30*time.Second)
	t.Logf("killed and restarted on its data dir: issuing again %s after the restart (TTL 10s)", time.Since(restarted).Round(time.Millisecond))
	after := append([]int64{first}, b.Issue(t, 20)...)
	assert.Equal(t, m, machineOf(first), "the same machine id")
	assert.Equal(t, lease, leaseOf(t, c, keys, m), "the same etcd lease: resumed, not claimed anew after it expired")
	leasetest.MetricReaches(t, b.Metric, "vesta_machine_lease_resumes_total", "1")
	assert.Equal(t, "0", b.Metric("vesta_machine_lease_claims_total"), "a resume is no claim")
	b.Logged(t, `msg="etcdlease: machine id resumed from the data dir" machine=`+strconv.FormatInt(m, 10)+` node=r2 lease=`+
		strconv.FormatInt(int64(lease), 16)+` offline=false`)
	idsAbove(t, before, after)
	eventually(t, 10*time.Second, "the machine key names the new node", func() bool {
		owner, l, ok := get(t, c, keys.Machine(m))
		return ok && owner == "r2" && clientv3.LeaseID(l) == lease
	})
}

// TestKilledNodeResumesOfflineAndRenewsOnceEtcdIsBack is stress only: it
// waits out the 10 s validity of the killed run's lease. A plain run covers
// the resume by TestKilledNodeResumesItsIdAndLease, and the offline
// validity it rests on by leasekit's TestOfflineValidity and pglease's
// TestResumeWhileTheDatabaseIsDown.
func TestKilledNodeResumesOfflineAndRenewsOnceEtcdIsBack(t *testing.T) {
	stresstest.Only(t, "kills the real server-rest and waits out its 10 s lease validity")
	t.Parallel()
	c := etcdClient(t)
	px := newProxy(t, etcdEndpoint)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	dir := t.TempDir()
	args := etcdArgs(px.Addr(), keys.Prefix, "10s", "off", dir)
	a := startRest(t, args...)
	a.FirstID(t, 30*time.Second)
	before := a.Issue(t, 20)
	m := machineOf(before[0])
	lease := leaseOf(t, c, keys, m)
	awaitSaved(t, dir, lease)

	a.Signal(t, syscall.SIGKILL)
	px.Cut()
	saved := readSavedLease(t, dir) // as the crash left it
	b := startRest(t, args...)
	first := b.FirstID(t, 30*time.Second)
	require.Less(t, time.Now().UnixNano(), saved.ValidUntil, "issuing within the saved validity, etcd unreachable")
	assert.Equal(t, m, machineOf(first), "resumed the same machine id with etcd unreachable")
	b.Logged(t, "etcd is unreachable; resuming the machine id on the claim saved in the data dir")
	b.Logged(t, `msg="etcdlease: machine id resumed from the data dir" machine=`+strconv.FormatInt(m, 10)+` node=off lease=`+
		strconv.FormatInt(int64(lease), 16)+` offline=true`)
	leasetest.MetricReaches(t, b.Metric, "vesta_machine_lease_resumes_total", "1")
	after := append([]int64{first}, b.Issue(t, 20)...)
	idsAbove(t, before, after)

	// etcd comes back before the saved validity ends: the node renews
	// the same lease and issues past that validity.
	px.Restore()
	eventually(t, 30*time.Second, "issuing past the validity saved before the crash", func() bool {
		code, _ := b.GenID()
		return time.Now().UnixNano() > saved.ValidUntil+int64(time.Second) && code == http.StatusOK
	})
	assert.Equal(t, lease, leaseOf(t, c, keys, m), "the same lease, renewed")
	assert.Equal(t, "0", b.Metric("vesta_machine_lease_claims_total"))
	assert.Equal(t, "0", b.Metric("vesta_machine_lease_fences_total"), "never fenced")
}

// TestRestartAfterTheSavedValidityDoesNotResume is stress only: three
// server-rest runs and a lease expiry in real time. A plain run covers the
// refusal to resume a lapsed lease by leasekit's TestOfflineValidity and
// the takeover above the old mark by TestRevokedHolderIsFencedAndTakenOver.
func TestRestartAfterTheSavedValidityDoesNotResume(t *testing.T) {
	stresstest.Only(t, "three real server-rest runs around a lease expiry")
	t.Parallel()
	// Machine range 640-640 (its own in this package, on the etcd of the
	// tests with ranges): the node's id is known, and another node can be
	// made to take it.
	c := rangesClient(t)
	px := newProxy(t, rangesEndpoint)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	dir := t.TempDir()
	args := etcdArgs(px.Addr(), keys.Prefix, "2s", "gone", dir)
	a := startRest(t, append(args, "--machine-range", "640-640")...)
	a.FirstID(t, 30*time.Second)
	before := a.Issue(t, 20)
	require.Equal(t, int64(640), machineOf(before[0]))
	lease := leaseOf(t, c, keys, 640)
	awaitSaved(t, dir, lease)

	a.Signal(t, syscall.SIGKILL)
	px.Cut()
	saved := readSavedLease(t, dir) // as the crash left it
	require.Equal(t, int64(lease), saved.Lease)
	validUntil := time.Unix(0, min(saved.ValidUntil, saved.StoredMarkMs*int64(time.Millisecond)))
	time.Sleep(time.Until(validUntil) + 100*time.Millisecond) // the cut outlasts the saved validity

	// Restarted with etcd still unreachable: the lease may have expired
	// and the id been granted to another node. It must not resume; it
	// waits for etcd, issuing nothing, rather than exit.
	b := startRest(t, append(args, "--machine-range", "640-640")...)
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		require.False(t, b.Exited(), "the restart waits for etcd, not exit")
		code, _ := b.GenID()
		require.NotEqual(t, http.StatusOK, code, "no ID past the saved validity without etcd")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Contains(t, b.Logs(), "saved in the data dir is no longer surely valid, and etcd does not answer")
	assert.NotContains(t, b.Logs(), "resumed from the data dir")
	b.Signal(t, syscall.SIGKILL)

	// etcd expires the lease; another node takes machine 640 and issues
	// above every ID of the first run.
	eventually(t, 10*time.Second, "the crashed run's lease expires", func() bool {
		ttl, err := c.TimeToLive(bg, lease)
		require.NoError(t, err)
		return ttl.TTL == -1
	})
	other := startNode(t, "other", func(o *etcdlease.Options) { o.MachineRange = &etcdlease.Range{First: 640, Last: 640} }, onRangesEtcd)
	require.Equal(t, int64(640), other.svc.Stats().Machine)
	lastUnit := int64(0)
	for _, id := range before {
		lastUnit = max(lastUnit, timeUnit(id))
	}
	assert.Greater(t, timeUnit(firstID(t, other.svc)), lastUnit, "the new holder issues above the crashed run's IDs")

	// With etcd back, the node claims anew: its old id is taken, so it
	// gets the other id of its range.
	px.Restore()
	d := startRest(t, append(args, "--machine-range", "640-641")...)
	id := d.FirstID(t, 30*time.Second)
	assert.Equal(t, int64(641), machineOf(id), "not the id another node holds now")
	assert.Equal(t, "0", d.Metric("vesta_machine_lease_resumes_total"))
	leasetest.MetricReaches(t, d.Metric, "vesta_machine_lease_claims_total", "1")
	d.Logged(t, "the claim saved in the data dir is gone; claiming anew")
}

func TestGracefulStopReleasesAndTheRestartPrefersItsId(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	dir := t.TempDir()
	args := etcdArgs(etcdEndpoint, keys.Prefix, "10s", "calm", dir)
	a := startRest(t, args...)
	a.FirstID(t, 30*time.Second)
	before := a.Issue(t, 20)
	m := machineOf(before[0])
	lease := leaseOf(t, c, keys, m)

	a.Stop(t)
	_, _, held := get(t, c, keys.Machine(m))
	assert.False(t, held, "a graceful stop releases the id")
	ttl, err := c.TimeToLive(bg, lease)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), ttl.TTL, "and revokes the lease")
	saved := readSavedLease(t, dir)
	assert.Zero(t, saved.Lease, "the state says released")
	assert.Equal(t, m, saved.Machine, "and keeps the id as a preference")

	b := startRest(t, args...)
	first := b.FirstID(t, 30*time.Second)
	assert.Equal(t, m, machineOf(first), "the restart claims its old id, free (random claims otherwise)")
	assert.NotEqual(t, lease, leaseOf(t, c, keys, m), "under a new lease")
	assert.Equal(t, "0", b.Metric("vesta_machine_lease_resumes_total"))
	leasetest.MetricReaches(t, b.Metric, "vesta_machine_lease_claims_total", "1")
	idsAbove(t, before, append([]int64{first}, b.Issue(t, 20)...))
}
