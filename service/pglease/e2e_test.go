package pglease_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
)

// rest is one run of the real server-rest, its stderr kept.
type rest struct {
	cmd    *exec.Cmd
	base   string
	logs   *syncbuf.Buffer
	waited chan struct{}
	err    error // the exit, once waited is closed
}

// startRest runs server-rest with args and env (added to the test's) on
// a free port; the test's end kills it.
func startRest(t *testing.T, env []string, args ...string) *rest {
	t.Helper()
	bin, err := testbin.Build("github.com/vesta-go/vesta/server-rest")
	if err != nil {
		t.Fatalf("building server-rest: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := ln.Addr().String()
	require.NoError(t, ln.Close())
	r := &rest{base: "http://" + listen, logs: &syncbuf.Buffer{}, waited: make(chan struct{})}
	r.cmd = exec.Command(bin, append(args, "--listen", listen)...)
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, io.MultiWriter(leasetest.Writer(t), r.logs)
	require.NoError(t, r.cmd.Start())
	go func() {
		r.err = r.cmd.Wait()
		close(r.waited)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.waited
	})
	return r
}

// get is the status and body of GET path (0 when the request failed).
func (r *rest) get(path string) (int, string) {
	resp, err := http.Get(r.base + path)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// firstID waits for r to issue an ID, failing if it exits first.
func (r *rest) firstID(t *testing.T, limit time.Duration) int64 {
	t.Helper()
	var id int64
	eventually(t, limit, "/genid answers 200", func() bool {
		select {
		case <-r.waited:
			t.Fatalf("server-rest exited: %v\n%s", r.err, r.logs.String())
		default:
		}
		code, body := r.get("/genid")
		id, _ = strconv.ParseInt(body, 10, 64)
		return code == http.StatusOK
	})
	return id
}

// metric is an unlabelled metric's value ("" when missing).
func (r *rest) metric(name string) string {
	_, page := r.get("/metrics")
	return leasetest.MetricValue(page, name)
}

// The real server-rest with --machine-provider postgres: it claims its id
// from the table, counts it in the lease metrics, resumes the same id at
// once after kill -9 on the same data dir (the claim, a minute long, is
// still live: a new claim of the range's one id would fail), releases it
// on SIGTERM, and never shows the DSN's password.
func TestServerRestWithPostgres(t *testing.T) {
	t.Parallel()
	const password = "pw-e2e-never-shown" // pgtest trusts every local user: any password connects
	dsn := strings.Replace(newDSN(t), "postgres://postgres@", "postgres://postgres:"+password+"@", 1)
	env := []string{"VESTA_MACHINE_DSN=" + dsn}
	args := []string{"--machine-provider", "postgres", "--machine-range", "300-300", "--etcd-lease-ttl", "60s",
		"--etcd-node-name", "rest-pg", "--data-dir", t.TempDir(), "--log-level", "info"}

	first := startRest(t, env, args...)
	id := first.firstID(t, 30*time.Second)
	assert.Equal(t, int64(300), machineOf(id))
	c := db(t, dsn)
	held, ok := rowOf(t, c, 300)
	require.True(t, ok)
	assert.True(t, held.live)
	assert.Equal(t, "rest-pg", held.holder)
	leasetest.MetricReaches(t, first.metric, "vesta_machine_lease_claims_total", "1")
	leasetest.MetricReaches(t, first.metric, "vesta_machine_lease_held", "1")

	require.NoError(t, first.cmd.Process.Kill()) // a crash: nothing released
	<-first.waited
	start := time.Now()
	second := startRest(t, env, args...)
	id2 := second.firstID(t, 30*time.Second)
	took := time.Since(start)
	assert.Equal(t, int64(300), machineOf(id2), "its own id back")
	assert.Greater(t, id2, id)
	leasetest.MetricReaches(t, second.metric, "vesta_machine_lease_resumes_total", "1")
	assert.Equal(t, "0", second.metric("vesta_machine_lease_claims_total"), "no new claim")
	after, _ := rowOf(t, c, 300)
	assert.Equal(t, held.token, after.token, "the same claim")
	t.Logf("kill -9 and restart: issuing again, with its own id, %s after the restart", took.Round(time.Millisecond))

	require.NoError(t, second.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-second.waited:
		require.NoError(t, second.err, "a clean exit")
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not stop on SIGTERM")
	}
	released, _ := rowOf(t, c, 300)
	assert.False(t, released.live, "a graceful stop releases the id")
	_, last := second.get("/genid") // nothing listens: last is ""
	assert.Empty(t, last)
	assert.GreaterOrEqual(t, released.markMs, intf.DefaultEpochMillis+timeUnit(id2)*1000, "the mark covers the IDs issued")
	for _, r := range []*rest{first, second} {
		assert.NotContains(t, r.logs.String(), password, "the DSN's password is never logged")
	}
}
