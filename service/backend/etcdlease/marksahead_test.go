package etcdlease_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// marksAhead stores, for each id, a mark an hour ahead: a former holder's
// clock was.
func marksAhead(t *testing.T, c *clientv3.Client, keys etcdlease.Keys, ids ...int64) {
	t.Helper()
	ahead := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	for _, id := range ids {
		_, err := c.Put(bg, keys.Mark(id), ahead)
		require.NoError(t, err)
	}
}

// heldIds counts the machine keys under keys.
func heldIds(t *testing.T, c *clientv3.Client, keys etcdlease.Keys) int64 {
	t.Helper()
	resp, err := c.Get(bg, keys.Machines(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	return resp.Count
}

// A starting node that claims ids whose marks are far ahead gives each
// back and takes the next free one, counting the refusals.
func TestStartSkipsIdsWhoseMarkIsFarAhead(t *testing.T) {
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	marksAhead(t, c, keys, 0, 1, 2)
	a := startNode(t, "a")
	assert.Equal(t, int64(3), a.svc.Stats().Machine)
	assert.Equal(t, uint64(3), a.lease.Stats().MarkRefusals)
	assert.Equal(t, uint64(3), a.svc.Stats().Lease.MarkRefusals, "the service's Stats (and /metrics) show it")
	assert.Equal(t, int64(1), heldIds(t, c, keys), "the refused ids were given back")
	_, err := a.svc.GenId(bg)
	assert.NoError(t, err)
}

// Past MaxMarkRefusals refusals a start fails, bounded, with an error that
// names the ids and how far ahead their marks are, and holds nothing.
func TestStartRefusedAfterTooManyMarksAhead(t *testing.T) {
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	ids := make([]int64, etcdlease.MaxMarkRefusals+1)
	for i := range ids {
		ids[i] = int64(i)
	}
	marksAhead(t, c, keys, ids...)
	lease := newLease(t, "a")
	start := time.Now()
	_, err := service.New(bg, settings(t, lease, "a"))
	require.Error(t, err)
	t.Logf("refused after %s: %v", time.Since(start).Round(time.Millisecond), err)
	assert.ErrorIs(t, err, intf.ErrClockBehind)
	var ahead *etcdlease.MarksAheadError
	require.True(t, errors.As(err, &ahead), "a *MarksAheadError: %v", err)
	require.Len(t, ahead.Refused, etcdlease.MaxMarkRefusals)
	assert.False(t, ahead.Exhausted)
	for i, r := range ahead.Refused {
		assert.Equal(t, int64(i), r.Machine)
		assert.Greater(t, r.Ahead, 59*time.Minute)
	}
	assert.Contains(t, err.Error(), "machine ids 0 (59m59.")
	assert.Contains(t, err.Error(), "the most one attempt tries (16)")
	assert.Contains(t, err.Error(), keys.Marks())
	assert.Equal(t, uint64(etcdlease.MaxMarkRefusals), lease.Stats().MarkRefusals)
	assert.Zero(t, heldIds(t, c, keys), "nothing held")
}

// A running node that lost its id meets more ids far ahead than one
// attempt tries: the next attempts skip those already refused, so it
// reaches the free id beyond them instead of trying the same ones forever.
func TestReclaimPastManyIdsFarAhead(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	lease := newLease(t, "a")
	keys := lease.Keys()
	gated := newGatedLease(lease)
	a := startService(t, settings(t, gated, "a"))
	require.Equal(t, int64(0), a.Stats().Machine)

	n := int64(etcdlease.MaxMarkRefusals + 4)
	blocked := make([]int64, n)
	for i := range blocked {
		blocked[i] = int64(i) + 1
	}
	marksAhead(t, c, keys, blocked...)
	_, err := c.Revoke(bg, leaseOf(t, c, keys, 0))
	require.NoError(t, err)
	<-gated.lost
	g, err := c.Grant(bg, 30)
	require.NoError(t, err)
	_, err = c.Put(bg, keys.Machine(0), "other", clientv3.WithLease(g.ID))
	require.NoError(t, err)
	close(gated.gate)

	eventually(t, 10*time.Second, "a holds an id again", func() bool { return a.Stats().LeaseHeld })
	assert.Equal(t, n+1, a.Stats().Machine, "every id from 1 to %d is far ahead", n)
	assert.Equal(t, uint64(n), lease.Stats().MarkRefusals, "each refused once")
	_, err = a.GenId(bg)
	assert.NoError(t, err)
}
