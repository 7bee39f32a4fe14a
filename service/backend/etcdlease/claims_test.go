package etcdlease_test

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// levelLog is testLog from level up: many nodes at debug level would
// bury the test's own lines.
func levelLog(t *testing.T, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(leasetest.Writer(t), &slog.HandlerOptions{Level: level}))
}

// sharedLease is a Lease on the test's client c, claiming at random as in
// production. Its TTL is long: with 64 nodes on a loaded machine under
// -race, a renewal may take longer than a short TTL allows, and what is
// measured here is the claims.
func sharedLease(t *testing.T, c *clientv3.Client, name string) *etcdlease.Lease {
	t.Helper()
	l, err := etcdlease.NewWithClient(c, etcdlease.Options{
		Common: etcdlease.Common{Prefix: prefixOf(t), TTL: 30 * time.Second, NodeName: name, Logger: levelLog(t, slog.LevelWarn).With("node", name)},
	})
	require.NoError(t, err)
	return l
}

func TestManyNodesClaimAtOnceInFewTxns(t *testing.T) {
	t.Parallel()
	const nodes = 64
	c := etcdClient(t) // one client for every node; closed after them
	leases := make([]*etcdlease.Lease, nodes)
	svcs := make([]*service.Service, nodes)
	for i := range leases {
		leases[i] = sharedLease(t, c, fmt.Sprintf("n%02d", i))
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i, l := range leases {
		wg.Go(func() {
			svc, err := service.New(bg, service.Settings{Lease: l, NoDataDir: true, Logger: levelLog(t, slog.LevelError)})
			if assert.NoError(t, err) {
				t.Cleanup(func() { _ = svc.Close() })
				svcs[i] = svc
			}
		})
	}
	wg.Wait()
	took := time.Since(start)

	keys := leases[0].Keys()
	held := map[int64]int{}
	var claims, txns uint64
	for i, svc := range svcs {
		require.NotNil(t, svc, "node %d started", i)
		id, err := svc.GenId(bg)
		require.NoError(t, err)
		m := svc.Stats().Machine
		assert.Equal(t, m, machineOf(id))
		if j, dup := held[m]; dup {
			t.Errorf("nodes %d and %d both hold machine %d", j, i, m)
		}
		held[m] = i
		owner, _, ok := get(t, c, keys.Machine(m))
		assert.True(t, ok && owner == fmt.Sprintf("n%02d", i), "machine %d's key names node %d (%q)", m, i, owner)
		st := svc.Stats().Lease
		assert.Equal(t, uint64(1), st.Claims, "node %d claimed once", i)
		claims += st.Claims
		txns += st.ClaimTxns
	}
	assert.Len(t, held, nodes, "distinct machine ids")
	perClaim := float64(txns) / float64(claims)
	t.Logf("%d nodes on one client started at once: all held distinct ids %s after the start, %d claim txns for %d claims (%.2f per claim)",
		nodes, took.Round(time.Millisecond), txns, claims, perClaim)
	assert.LessOrEqual(t, perClaim, 3.0, "claim txns per claim on average")

	// Every other id is taken at once: the next node is refused with a
	// clear error after one failed claim and the listing it returned.
	grant, err := c.Grant(bg, 60)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.Revoke(bg, grant.ID) })
	var ops []clientv3.Op
	for id := int64(0); id <= intf.MaxMachine; id++ {
		if _, ok := held[id]; !ok {
			ops = append(ops, clientv3.OpPut(keys.Machine(id), "squatter", clientv3.WithLease(grant.ID)))
		}
	}
	_, err = c.Txn(bg).Then(ops...).Commit()
	require.NoError(t, err)
	late := sharedLease(t, c, "late")
	start = time.Now()
	_, err = service.New(bg, service.Settings{Lease: late, NoDataDir: true, Logger: levelLog(t, slog.LevelError)})
	require.ErrorIs(t, err, etcdlease.ErrAllTaken)
	assert.Contains(t, err.Error(), "all 1024 machine ids of 0-1023 under "+keys.Machines())
	st := late.Stats()
	t.Logf("the 1025th node was refused %s after its start, after %d claim txn(s): %v", time.Since(start).Round(time.Millisecond), st.ClaimTxns, err)
	assert.LessOrEqual(t, st.ClaimTxns, uint64(2), "refused after at most 2 claim txns")
	assert.Zero(t, st.Claims)
}
