package etcdlease_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

func TestThreeNodesGetDistinctIds(t *testing.T) {
	// Start all three at once on a range of three ids (its own: tests
	// under other prefixes with overlapping ranges would be refused; on the
	// etcd of the tests with ranges), claiming at random
	// as in production: the claims race, and the transaction lets exactly
	// one node win each id.
	nodes := make([]*node, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			n := &node{name: fmt.Sprintf("n%d", i), lease: newLease(t, fmt.Sprintf("n%d", i),
				etcdlease.ClaimLowestFirst(false), func(o *etcdlease.Options) { o.MachineRange = &etcdlease.Range{First: 100, Last: 102} }, onRangesEtcd)}
			svc, err := service.New(bg, settings(t, n.lease, n.name))
			if assert.NoError(t, err) {
				t.Cleanup(func() { _ = svc.Close() })
				n.svc = svc
			}
			nodes[i] = n
		})
	}
	wg.Wait()
	c := rangesClient(t)
	var ids []int64
	for _, n := range nodes {
		require.NotNil(t, n.svc)
		id, err := n.svc.GenId(bg)
		require.NoError(t, err)
		m := n.svc.Stats().Machine
		assert.Equal(t, m, machineOf(id), "IDs carry the machine id held")
		owner, _, ok := get(t, c, n.lease.Keys().Machine(m))
		assert.True(t, ok)
		assert.Equal(t, n.name, owner, "the machine key names its holder")
		st := n.svc.Stats()
		assert.True(t, st.LeaseHeld)
		assert.Greater(t, st.LeaseMarkMillis, int64(0), "a mark is stored with the lease")
		ids = append(ids, m)
	}
	slices.Sort(ids)
	assert.Equal(t, []int64{100, 101, 102}, ids)
}

func TestAllIdsTaken(t *testing.T) {
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	grant, err := c.Grant(bg, 60)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.Revoke(bg, grant.ID) })
	ops := make([]clientv3.Op, 0, intf.MaxMachine+1)
	for id := int64(0); id <= intf.MaxMachine; id++ {
		ops = append(ops, clientv3.OpPut(keys.Machine(id), "squatter", clientv3.WithLease(grant.ID)))
	}
	_, err = c.Txn(bg).Then(ops...).Commit()
	require.NoError(t, err)

	lease := newLease(t, "late")
	_, err = service.New(bg, settings(t, lease, "late"))
	require.Error(t, err)
	assert.ErrorIs(t, err, etcdlease.ErrAllTaken)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), "all 1024 machine ids of 0-1023 under "+keys.Machines())
	_, _, reported := get(t, c, keys.Clock("late"))
	assert.False(t, reported, "the refused node revoked its lease: its clock report is gone")
}
