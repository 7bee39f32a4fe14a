package pglease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/pglease"
	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/backend/pgtest"
)

// A machineDSN naming a primary and its asynchronous standby is refused
// at start, with the segment store's check and words (a failover could
// lose claims and marks and hand an id out twice), unless the operator
// accepts the risk; one host, or the override, starts.
func TestAsynchronousFailoverRefused(t *testing.T) {
	t.Parallel() // its own cluster
	c := pgtest.NewCluster(t, pgtest.ClusterOptions{Sync: false})
	start := func(dsn string, allow bool) error {
		l := newLease(t, dsn, "repl", func(o *pglease.Options) {
			o.AllowAsyncFailover = allow
			o.MachineRange = &pglease.Range{First: 40, Last: 41}
		})
		svc, err := service.New(bg, service.Settings{Lease: l, NoDataDir: true, Logger: testLog(t)})
		if err == nil {
			require.NoError(t, svc.Close())
		}
		return err
	}
	err := start(c.DSN("postgres"), false)
	require.ErrorIs(t, err, pgstore.ErrUnsafeReplication, "the segment store's error: one check")
	assert.ErrorContains(t, err, "pglease: refusing to claim machine ids on "+c.Primary.Addr()+": machineDSN names 2 servers")
	assert.ErrorContains(t, err, "synchronous_standby_names is empty")
	assert.ErrorContains(t, err, "machineAllowAsyncFailover: true")
	assert.NoError(t, start(c.DSN("postgres"), true), "allowed")
	assert.NoError(t, start(c.Primary.DSN("postgres"), false), "one host: no failover")

	// Through the real server-rest: it exits, naming the key.
	r := startRest(t, nil, "--machine-provider", "postgres", "--machine-dsn", c.DSN("postgres"), "--no-data-dir=true", "--segment-store", "off")
	select {
	case <-r.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not refuse the DSN")
	}
	require.Error(t, r.Err())
	assert.Contains(t, r.Logs(), "machineAllowAsyncFailover: true")
}
