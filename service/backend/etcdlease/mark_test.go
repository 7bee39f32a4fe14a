package etcdlease_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

func TestStoreMarkByFormerHolderFails(t *testing.T) {
	a := startNode(t, "a")
	require.Equal(t, int64(0), a.svc.Stats().Machine)
	c := etcdClient(t)
	keys := a.lease.Keys()

	// Another lease takes machine 0 over behind a's back and stores its
	// own, higher mark.
	grant, err := c.Grant(bg, 60)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.Revoke(bg, grant.ID) })
	high := time.Now().Add(time.Hour).UnixMilli()
	_, err = c.Txn(bg).Then(
		clientv3.OpPut(keys.Machine(0), "intruder", clientv3.WithLease(grant.ID)),
		clientv3.OpPut(keys.Mark(0), strconv.FormatInt(high, 10)),
	).Commit()
	require.NoError(t, err)

	err = a.lease.StoreMark(bg, 0, time.Now().UnixMilli())
	assert.ErrorIs(t, err, etcdlease.ErrNotHeld)
	assert.ErrorIs(t, err, intf.ErrFenced)
	assert.Equal(t, high, markOf(t, c, keys, 0), "a former holder never lowers the new holder's mark")
	err = a.lease.StoreMark(bg, 5, time.Now().UnixMilli())
	assert.ErrorIs(t, err, etcdlease.ErrNotHeld, "nor stores the mark of an id it never held")

	// a gives the id up and claims the next free one.
	eventually(t, 2*testTTL, "a holds machine 1", func() bool {
		id, err := a.svc.GenId(bg)
		return err == nil && machineOf(id) == 1
	})
	assert.Equal(t, uint64(1), a.svc.Stats().Fences)
	owner, _, _ := get(t, c, keys.Machine(0))
	assert.Equal(t, "intruder", owner)
	assert.Equal(t, high, markOf(t, c, keys, 0))
}

func TestCloseReleasesIdAndStoresExactMark(t *testing.T) {
	a := startNode(t, "a")
	c := etcdClient(t)
	keys := a.lease.Keys()
	var last intf.Id
	for range 1000 {
		id, err := a.svc.GenId(bg)
		require.NoError(t, err)
		last = id
	}
	require.Greater(t, markOf(t, c, keys, 0), intf.DefaultEpochMillis+timeUnit(last)*1000, "while running the mark is ahead")
	require.NoError(t, a.svc.Close())

	_, _, held := get(t, c, keys.Machine(0))
	assert.False(t, held, "the machine key is gone")
	_, _, reported := get(t, c, keys.Clock("a"))
	assert.False(t, reported, "the clock report is gone")
	assert.Equal(t, intf.DefaultEpochMillis+timeUnit(last)*1000, markOf(t, c, keys, 0), "the mark is the exact last time issued")
	_, err := a.svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrClosed)

	b := startNode(t, "b")
	assert.Equal(t, int64(0), b.svc.Stats().Machine, "the id is free at once")
	id, err := b.svc.GenId(bg)
	require.NoError(t, err)
	assert.Greater(t, timeUnit(id), timeUnit(last))
}

// A mark stored with the lease never goes below the mark the id had when
// it was claimed: the previous holder may have issued up to it.
func TestStoreMarkKeepsThePreviousHoldersMark(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	prefix := prefixOf(t)
	keys := etcdlease.Keys{Prefix: prefix}
	prev := time.Now().Add(1500 * time.Millisecond).UnixMilli() // a previous holder's mark, a little ahead
	_, err := c.Put(bg, keys.Mark(0), strconv.FormatInt(prev, 10))
	require.NoError(t, err)
	a := startNode(t, "a") // claims 0 and waits past prev
	require.Equal(t, int64(0), a.svc.Stats().Machine)

	require.NoError(t, a.lease.StoreMark(bg, 0, prev-60_000))
	// (The service's own writer may have stored a later mark since: ≥.)
	assert.GreaterOrEqual(t, markOf(t, c, keys, 0), prev, "an exact mark below the previous holder's is raised to it")
}
