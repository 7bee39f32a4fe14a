package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/scripts/grayfail"
	"github.com/vesta-go/vesta/server-rpc/rpcserver/rpctest"
)

// The rows of issue 21, through real server-rpc processes. The bounds are
// generous (a noisy 2-core machine); scripts/bench-grayfail.sh prints the
// figures against the tight targets.
func TestGrayFailureRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server-rpc processes")
	}
	e := &grayfail.Env{Bin: rpctest.BuildServerRPC(t), Dir: t.TempDir()}

	t.Run("stopped server: every call ends by its deadline", func(t *testing.T) {
		s, err := e.Stopped(64, time.Second)
		require.NoError(t, err)
		assert.Positive(t, s.Calls)
		assert.Less(t, s.OverDeadline, time.Second, "slowest call %v: %s", s.Slowest, s.SlowestErr)
		assert.Less(t, s.Close, time.Second)
		assert.LessOrEqual(t, s.Goroutines, 0, "goroutines left behind")
	})
	t.Run("buffered client: Close with the server stopped mid-refill", func(t *testing.T) {
		d, err := e.BufferedClose()
		require.NoError(t, err)
		assert.Less(t, d, time.Second)
	})
	t.Run("A stopped, B healthy: calls go to B", func(t *testing.T) {
		f, err := e.Failover(16, 300*time.Millisecond, 2*time.Second)
		require.NoError(t, err)
		require.Positive(t, f.After)
		assert.GreaterOrEqual(t, float64(f.AfterOK)/float64(f.After), 0.95, "%+v", f)
		assert.Zero(t, f.Duplicates)
	})
	t.Run("the only server restarts: used at once", func(t *testing.T) {
		r, err := e.Restart(16, 500*time.Millisecond)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, r.FirstOK, time.Duration(0), "a call succeeded after the restart")
		assert.Less(t, r.FirstOK, 3*time.Second)
		assert.Zero(t, r.Duplicates)
	})
	t.Run("rolling kill: no failure while a server is up", func(t *testing.T) {
		r, err := e.Rolling(16, 500*time.Millisecond)
		require.NoError(t, err)
		assert.Zero(t, r.FailedWhileUp, r.LastErr)
		assert.Zero(t, r.Duplicates)
	})
	t.Run("the server refuses what it should", func(t *testing.T) {
		w, err := e.Wire()
		require.NoError(t, err)
		assert.Less(t, w.HugeTagErrLen, 300)
		assert.Zero(t, w.PastDeadlineIds)
		assert.Contains(t, w.PastDeadlineErr, "deadline")
		assert.Contains(t, w.UnknownBitsErr, "set")
	})
}
