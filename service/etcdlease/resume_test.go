package etcdlease_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/service/etcdlease"
)

// These tests kill the real server-rest with SIGKILL (a crash: nothing
// revoked, nothing released) and restart it on the same data dir, where
// the lease saved its state (lease.state).

// restProc is one run of server-rest: its log is kept for assertions.
type restProc struct {
	cmd    *exec.Cmd
	base   string // http://host:port
	logs   *syncbuf.Buffer
	exited chan error    // receives the exit once
	waited chan struct{} // closed on exit
}

// startRest starts server-rest with args on a new port, logging to the
// test's log and to p.logs. At the end of the test it is stopped with
// SIGTERM (so that its lease is revoked: ranges registered by a killed
// run would outlive the test), and killed if that takes too long.
func startRest(t *testing.T, args ...string) *restProc {
	t.Helper()
	listen := freeURL().Host
	p := &restProc{base: "http://" + listen, logs: &syncbuf.Buffer{}, exited: make(chan error, 1), waited: make(chan struct{})}
	p.cmd = exec.Command(buildServerRest(t), append(args, "--listen", listen)...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, io.MultiWriter(leasetest.Writer(t), p.logs)
	require.NoError(t, p.cmd.Start())
	go func() {
		p.exited <- p.cmd.Wait()
		close(p.waited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.waited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.waited
		}
	})
	return p
}

// kill crashes p: SIGKILL, nothing runs after it.
func (p *restProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	<-p.waited
}

// stop stops p with SIGTERM and requires a clean exit.
func (p *restProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exited:
		require.NoError(t, err, "a clean exit")
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not stop on SIGTERM")
	}
}

// genid asks for one ID: the status code and the ID (0 unless 200).
func (p *restProc) genid() (int, int64) {
	code, body := httpStatus(p.base + "/genid")
	if code != http.StatusOK {
		return code, 0
	}
	id, err := strconv.ParseInt(strings.TrimSpace(body), 10, 64)
	if err != nil {
		return 0, 0
	}
	return code, id
}

// firstIssued waits until p answers /genid with an ID and returns it,
// failing if p exits first.
func (p *restProc) firstIssued(t *testing.T, limit time.Duration) int64 {
	t.Helper()
	var id int64
	eventually(t, limit, "/genid answers 200", func() bool {
		select {
		case err := <-p.exited:
			t.Fatalf("server-rest exited: %v\n%s", err, p.logs.String())
		default:
		}
		var code int
		code, id = p.genid()
		return code == http.StatusOK
	})
	return id
}

// issue takes n IDs from p, which must be issuing.
func (p *restProc) issue(t *testing.T, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		code, id := p.genid()
		require.Equal(t, http.StatusOK, code, "/genid")
		ids[i] = id
	}
	return ids
}

// logged waits until p's log holds line (the lease logs after the service
// is up, so a log line may follow the first ID).
func (p *restProc) logged(t *testing.T, line string) {
	t.Helper()
	eventually(t, 10*time.Second, "logged: "+line, func() bool { return strings.Contains(p.logs.String(), line) })
}

// metric is the value of an unlabelled metric of p ("" when missing).
func (p *restProc) metric(name string) string {
	_, page := httpStatus(p.base + "/metrics")
	return metricValue(page, name)
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
	a.firstIssued(t, 30*time.Second)
	before := a.issue(t, 20)
	m := machineOf(before[0])
	lease := leaseOf(t, c, keys, m)
	leasetest.MetricReaches(t, a.metric, "vesta_machine_lease_claims_total", "1")
	assert.Equal(t, "0", a.metric("vesta_machine_lease_resumes_total"))
	awaitSaved(t, dir, lease)

	a.kill(t)
	// Another node name, as the default hostname-pid would give.
	restarted := time.Now()
	b := startRest(t, etcdArgs(etcdEndpoint, keys.Prefix, "10s", "r2", dir)...)
	first := b.firstIssued(t, 30*time.Second)
	t.Logf("killed and restarted on its data dir: issuing again %s after the restart (TTL 10s)", time.Since(restarted).Round(time.Millisecond))
	after := append([]int64{first}, b.issue(t, 20)...)
	assert.Equal(t, m, machineOf(first), "the same machine id")
	assert.Equal(t, lease, leaseOf(t, c, keys, m), "the same etcd lease: resumed, not claimed anew after it expired")
	leasetest.MetricReaches(t, b.metric, "vesta_machine_lease_resumes_total", "1")
	assert.Equal(t, "0", b.metric("vesta_machine_lease_claims_total"), "a resume is no claim")
	b.logged(t, `msg="etcdlease: machine id resumed from the data dir" machine=`+strconv.FormatInt(m, 10)+` node=r2 lease=`+
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
	a.firstIssued(t, 30*time.Second)
	before := a.issue(t, 20)
	m := machineOf(before[0])
	lease := leaseOf(t, c, keys, m)
	awaitSaved(t, dir, lease)

	a.kill(t)
	px.Cut()
	saved := readSavedLease(t, dir) // as the crash left it
	b := startRest(t, args...)
	first := b.firstIssued(t, 30*time.Second)
	require.Less(t, time.Now().UnixNano(), saved.ValidUntil, "issuing within the saved validity, etcd unreachable")
	assert.Equal(t, m, machineOf(first), "resumed the same machine id with etcd unreachable")
	b.logged(t, "etcd is unreachable; resuming the machine id on the claim saved in the data dir")
	b.logged(t, `msg="etcdlease: machine id resumed from the data dir" machine=`+strconv.FormatInt(m, 10)+` node=off lease=`+
		strconv.FormatInt(int64(lease), 16)+` offline=true`)
	leasetest.MetricReaches(t, b.metric, "vesta_machine_lease_resumes_total", "1")
	after := append([]int64{first}, b.issue(t, 20)...)
	idsAbove(t, before, after)

	// etcd comes back before the saved validity ends: the node renews
	// the same lease and issues past that validity.
	px.Restore()
	eventually(t, 30*time.Second, "issuing past the validity saved before the crash", func() bool {
		code, _ := b.genid()
		return time.Now().UnixNano() > saved.ValidUntil+int64(time.Second) && code == http.StatusOK
	})
	assert.Equal(t, lease, leaseOf(t, c, keys, m), "the same lease, renewed")
	assert.Equal(t, "0", b.metric("vesta_machine_lease_claims_total"))
	assert.Equal(t, "0", b.metric("vesta_machine_lease_fences_total"), "never fenced")
}

// TestRestartAfterTheSavedValidityDoesNotResume is stress only: three
// server-rest runs and a lease expiry in real time. A plain run covers the
// refusal to resume a lapsed lease by leasekit's TestOfflineValidity and
// the takeover above the old mark by TestRevokedHolderIsFencedAndTakenOver.
func TestRestartAfterTheSavedValidityDoesNotResume(t *testing.T) {
	stresstest.Only(t, "three real server-rest runs around a lease expiry")
	t.Parallel()
	// Machine range 640-640 (its own in this package): the node's id is
	// known, and another node can be made to take it.
	c := etcdClient(t)
	px := newProxy(t, etcdEndpoint)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	dir := t.TempDir()
	args := etcdArgs(px.Addr(), keys.Prefix, "2s", "gone", dir)
	a := startRest(t, append(args, "--machine-range", "640-640")...)
	a.firstIssued(t, 30*time.Second)
	before := a.issue(t, 20)
	require.Equal(t, int64(640), machineOf(before[0]))
	lease := leaseOf(t, c, keys, 640)
	awaitSaved(t, dir, lease)

	a.kill(t)
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
		select {
		case err := <-b.exited:
			t.Fatalf("the restart must wait for etcd, not exit: %v", err)
		default:
		}
		code, _ := b.genid()
		require.NotEqual(t, http.StatusOK, code, "no ID past the saved validity without etcd")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Contains(t, b.logs.String(), "saved in the data dir is no longer surely valid, and etcd does not answer")
	assert.NotContains(t, b.logs.String(), "resumed from the data dir")
	b.kill(t)

	// etcd expires the lease; another node takes machine 640 and issues
	// above every ID of the first run.
	eventually(t, 10*time.Second, "the crashed run's lease expires", func() bool {
		ttl, err := c.TimeToLive(bg, lease)
		require.NoError(t, err)
		return ttl.TTL == -1
	})
	other := startNode(t, "other", func(o *etcdlease.Options) { o.MachineRange = &etcdlease.Range{First: 640, Last: 640} })
	require.Equal(t, int64(640), other.svc.Machine())
	lastUnit := int64(0)
	for _, id := range before {
		lastUnit = max(lastUnit, timeUnit(id))
	}
	assert.Greater(t, timeUnit(firstID(t, other.svc)), lastUnit, "the new holder issues above the crashed run's IDs")

	// With etcd back, the node claims anew: its old id is taken, so it
	// gets the other id of its range.
	px.Restore()
	d := startRest(t, append(args, "--machine-range", "640-641")...)
	id := d.firstIssued(t, 30*time.Second)
	assert.Equal(t, int64(641), machineOf(id), "not the id another node holds now")
	assert.Equal(t, "0", d.metric("vesta_machine_lease_resumes_total"))
	leasetest.MetricReaches(t, d.metric, "vesta_machine_lease_claims_total", "1")
	d.logged(t, "the claim saved in the data dir is gone; claiming anew")
}

func TestGracefulStopReleasesAndTheRestartPrefersItsId(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	dir := t.TempDir()
	args := etcdArgs(etcdEndpoint, keys.Prefix, "10s", "calm", dir)
	a := startRest(t, args...)
	a.firstIssued(t, 30*time.Second)
	before := a.issue(t, 20)
	m := machineOf(before[0])
	lease := leaseOf(t, c, keys, m)

	a.stop(t)
	_, _, held := get(t, c, keys.Machine(m))
	assert.False(t, held, "a graceful stop releases the id")
	ttl, err := c.TimeToLive(bg, lease)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), ttl.TTL, "and revokes the lease")
	saved := readSavedLease(t, dir)
	assert.Zero(t, saved.Lease, "the state says released")
	assert.Equal(t, m, saved.Machine, "and keeps the id as a preference")

	b := startRest(t, args...)
	first := b.firstIssued(t, 30*time.Second)
	assert.Equal(t, m, machineOf(first), "the restart claims its old id, free (random claims otherwise)")
	assert.NotEqual(t, lease, leaseOf(t, c, keys, m), "under a new lease")
	assert.Equal(t, "0", b.metric("vesta_machine_lease_resumes_total"))
	leasetest.MetricReaches(t, b.metric, "vesta_machine_lease_claims_total", "1")
	idsAbove(t, before, append([]int64{first}, b.issue(t, 20)...))
}
