package pglease_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/intf"
)

// startRest runs the real server-rest with args and env (leasetest.Rest).
func startRest(t *testing.T, env []string, args ...string) *leasetest.Rest {
	return leasetest.StartRest(t, env, args...)
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
	id := first.FirstID(t, 30*time.Second)
	assert.Equal(t, int64(300), machineOf(id))
	c := db(t, dsn)
	held, ok := rowOf(t, c, 300)
	require.True(t, ok)
	assert.True(t, held.live)
	assert.Equal(t, "rest-pg", held.holder)
	leasetest.MetricReaches(t, first.Metric, "vesta_machine_lease_claims_total", "1")
	leasetest.MetricReaches(t, first.Metric, "vesta_machine_lease_held", "1")

	require.NoError(t, first.Cmd.Process.Kill()) // a crash: nothing released
	<-first.Done()
	start := time.Now()
	second := startRest(t, env, args...)
	id2 := second.FirstID(t, 30*time.Second)
	took := time.Since(start)
	assert.Equal(t, int64(300), machineOf(id2), "its own id back")
	assert.Greater(t, id2, id)
	leasetest.MetricReaches(t, second.Metric, "vesta_machine_lease_resumes_total", "1")
	assert.Equal(t, "0", second.Metric("vesta_machine_lease_claims_total"), "no new claim")
	after, _ := rowOf(t, c, 300)
	assert.Equal(t, held.token, after.token, "the same claim")
	t.Logf("kill -9 and restart: issuing again, with its own id, %s after the restart", took.Round(time.Millisecond))

	require.NoError(t, second.Cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-second.Done():
		require.NoError(t, second.Err(), "a clean exit")
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not stop on SIGTERM")
	}
	released, _ := rowOf(t, c, 300)
	assert.False(t, released.live, "a graceful stop releases the id")
	_, last := second.Get("/genid") // nothing listens: last is ""
	assert.Empty(t, last)
	assert.GreaterOrEqual(t, released.markMs, intf.DefaultEpochMillis+timeUnit(id2)*1000, "the mark covers the IDs issued")
	for _, r := range []*leasetest.Rest{first, second} {
		assert.NotContains(t, r.Logs(), password, "the DSN's password is never logged")
	}
}
