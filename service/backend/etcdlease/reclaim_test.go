package etcdlease_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// A running node that loses its id and, claiming again, meets an id whose
// mark is far ahead (a former holder's clock was) must not stay fenced for
// good: it skips that id and holds another.
func TestReclaimSkipsAnIdWhoseMarkIsFarAhead(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	lease := newLease(t, "a")
	keys := lease.Keys()
	gated := newGatedLease(lease)
	a := startService(t, settings(t, gated, "a"))
	require.Equal(t, int64(0), a.Stats().Machine)

	_, err := c.Put(bg, keys.Mark(1), strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	require.NoError(t, err)
	_, err = c.Revoke(bg, leaseOf(t, c, keys, 0))
	require.NoError(t, err)
	<-gated.lost
	// Another node takes 0 meanwhile: the lowest free id is now 1.
	g, err := c.Grant(bg, 30)
	require.NoError(t, err)
	_, err = c.Put(bg, keys.Machine(0), "other", clientv3.WithLease(g.ID))
	require.NoError(t, err)
	close(gated.gate)

	eventually(t, 10*time.Second, "a holds an id again", func() bool { return a.Stats().LeaseHeld })
	assert.Equal(t, int64(2), a.Stats().Machine, "id 0 is taken and id 1's mark is an hour ahead")
	_, err = a.GenId(bg)
	assert.NoError(t, err)
	_, _, held := get(t, c, keys.Machine(1))
	assert.False(t, held, "the refused id was given back")
}

// A node cut from etcd keeps its lease, and its aging clock report, for up
// to a TTL; a node starting meanwhile with a clock in line must not be
// refused as "ahead" of that stale report.
//
// Stress only: it waits for a second report of a node on a 10 s TTL, then
// for that report to age. A plain run covers the clock check by
// TestClockSkewRefusesToStart, and its median over live reports by
// TestMedianSkew and TestPick.
func TestAStaleClockReportRefusesNobody(t *testing.T) {
	stresstest.Only(t, "waits 5-6 s of real time for a clock report to age")
	t.Parallel()
	c := etcdClient(t)
	p := newProxy(t, etcdEndpoint)
	// b's long TTL keeps its lease, and its aging report, alive well past
	// a's start however slow the machine; a's check uses a's own (3 s) TTL.
	b := startNode(t, "b", withEndpoint(p.Addr()), func(o *etcdlease.Options) { o.TTL = 10 * time.Second })
	keys := b.lease.Keys()
	v0, _, _ := get(t, c, keys.Clock("b"))
	eventually(t, 5*time.Second, "b reports again", func() bool { v, _, _ := get(t, c, keys.Clock("b")); return v != v0 })
	p.Cut()
	t.Cleanup(p.Restore)                // runs before b's cleanup, which then releases its id at once
	time.Sleep(1600 * time.Millisecond) // b's report is now older than a's mark interval (1 s)
	_, _, alive := get(t, c, keys.Machine(0))
	require.True(t, alive, "b's lease is still alive")

	lease := newLease(t, "a", func(o *etcdlease.Options) { o.MaxClockSkew = 200 * time.Millisecond })
	svc, err := service.New(bg, settings(t, lease, "a"))
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	assert.Equal(t, int64(1), svc.Stats().Machine)
}
