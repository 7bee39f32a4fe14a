package etcdlease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/internal/leasekit"
	"github.com/vesta-go/vesta/service/backend/lease"
)

// untilStopped calls GenId until it fails and returns the last ID issued,
// the time read just before the call that issued it, and the error.
func untilStopped(t *testing.T, svc *service.Service, limit time.Duration) (lastID intf.Id, lastOK time.Time, err error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		before := time.Now()
		id, err := svc.GenId(bg)
		if err != nil {
			return lastID, lastOK, err
		}
		lastID, lastOK = id, before
	}
	t.Fatalf("still issuing %s later", limit)
	return 0, time.Time{}, nil
}

func TestRevokedHolderIsFencedAndTakenOver(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	aLease := newLease(t, "a")
	keys := aLease.Keys()
	gated := newGatedLease(aLease)
	a := startService(t, settings(t, gated, "a"))
	require.Equal(t, int64(0), a.Stats().Machine)

	revoked := time.Now()
	_, err := c.Revoke(bg, leaseOf(t, c, keys, 0))
	require.NoError(t, err)
	lastA, lastOK, err := untilStopped(t, a, 2*testTTL)
	fencedAfter := time.Since(revoked)
	require.ErrorIs(t, err, intf.ErrFenced)
	assert.Less(t, lastOK.Sub(revoked), testTTL-lease.FenceMargin(testTTL),
		"no ID after the validity of the last renewal, which came before the revocation")
	t.Logf("TTL %s: the holder stopped issuing %s after its lease was revoked behind its back (renewals every %s)",
		testTTL, fencedAfter.Round(time.Millisecond), leasekit.RenewInterval(testTTL))
	<-gated.lost
	assert.False(t, a.Stats().LeaseHeld)
	assert.Equal(t, uint64(1), a.Stats().Fences)

	// While a waits at the gate, b takes machine 0 and must issue above
	// every ID a issued: above a's mark, which a can no longer change.
	markA := markOf(t, c, keys, 0)
	assert.LessOrEqual(t, timeUnit(lastA), unitOfMs(intf.MaxPeak, markA), "a issued nothing above its mark")
	b := startNode(t, "b")
	require.Equal(t, int64(0), b.svc.Stats().Machine, "b takes the revoked id")
	idB := firstID(t, b.svc)
	assert.Greater(t, timeUnit(idB), unitOfMs(intf.MaxPeak, markA), "b issues above a's mark")

	// a claims again: 0 is b's now, so it gets 1.
	close(gated.gate)
	eventually(t, 2*testTTL, "a issues again", func() bool { _, err := a.GenId(bg); return err == nil })
	assert.Equal(t, int64(1), a.Stats().Machine)
	assert.True(t, a.Stats().LeaseHeld)
}

func TestCutHolderIsFencedBeforeItsLeaseExpires(t *testing.T) {
	t.Parallel()
	// TTL 2s: the fence (at most TTL − margin = 1.88s after the last
	// renewal) comes before the 3s-ahead lease mark runs out (2s after the
	// last mark stored), so the fence is what stops the holder.
	const ttl = 2 * time.Second
	withTTL := func(o *etcdlease.Options) { o.TTL = ttl }
	c := etcdClient(t)
	p := newProxy(t, etcdEndpoint)
	aLease := newLease(t, "a", withEndpoint(p.Addr()), withTTL)
	keys := aLease.Keys()
	sa := settings(t, aLease, "a")
	sa.Type = intf.MinGranularity // millisecond units: a precise fence
	a := startService(t, sa)
	require.Equal(t, int64(0), a.Stats().Machine)
	first, err := a.GenId(bg)
	require.NoError(t, err)

	p.Cut()
	cut := time.Now() // after the cut: a renewal sent before it may still have succeeded
	lastA, lastOK, stopErr := untilStopped(t, a, 3*ttl)
	stopped := time.Since(cut)
	require.True(t, errors.Is(stopErr, intf.ErrFenced) || errors.Is(stopErr, intf.ErrNotPersisted), "stopped by the fence (or the lease mark): %v", stopErr)
	bound := ttl - lease.FenceMargin(ttl)
	assert.Less(t, lastOK.Sub(cut), bound, "no ID later than TTL − margin after the last renewal, which came before the cut")
	assert.GreaterOrEqual(t, lastA, first)

	eventually(t, 3*ttl, "etcd expires a's lease", func() bool { _, _, ok := get(t, c, keys.Machine(0)); return !ok })
	expired := time.Since(cut)
	assert.Less(t, stopped, expired, "a stopped issuing before etcd could give its id to another node")

	markA := markOf(t, c, keys, 0)
	sb := settings(t, newLease(t, "b", withTTL), "b")
	sb.Type = intf.MinGranularity
	b := startService(t, sb)
	takeover := time.Since(cut)
	require.Equal(t, int64(0), b.Stats().Machine, "b takes the expired id")
	idB := firstID(t, b)
	assert.Greater(t, timeUnit(idB), unitOfMs(intf.MinGranularity, markA), "b issues above a's mark")
	assert.Greater(t, timeUnit(idB), timeUnit(lastA))
	t.Logf("TTL %s (fence bound %s after the last renewal): after the cut, a stopped issuing at %s (%v), etcd expired its lease at %s, b issued with the id at %s",
		ttl, bound, stopped.Round(time.Millisecond), stopErr, expired.Round(time.Millisecond), takeover.Round(time.Millisecond))

	// Once etcd is back, a learns its lease is gone and claims id 1.
	p.Restore()
	eventually(t, 3*ttl, "a issues again", func() bool { _, err := a.GenId(bg); return err == nil })
	assert.Equal(t, int64(1), a.Stats().Machine)
}

func TestBriefOutageDoesNotInterrupt(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	p := newProxy(t, etcdEndpoint)
	a := startNode(t, "a", withEndpoint(p.Addr()))
	keys := a.lease.Keys()
	leaseBefore := leaseOf(t, c, keys, 0)

	// The outage: shorter than the fencing slack left after a renewal
	// (TTL − margin − renew interval) less a reconnect.
	outage := leasekit.RenewInterval(testTTL) / 2
	// Cut in the first half of a renewal interval: the slack is the
	// design's, not what is left after renewals a loaded machine was
	// already late with (once, CI's load had made it miss two).
	fresh := (testTTL - lease.FenceMargin(testTTL) - leasekit.RenewInterval(testTTL)/2).Milliseconds()
	eventually(t, 2*testTTL, "a renewal", func() bool { return a.svc.Stats().LeaseLeftMillis > fresh })
	cut := time.Now()
	p.Cut()
	time.AfterFunc(outage, p.Restore)
	// Issue until well past the validity of the last renewal before the
	// cut: only renewals after the outage keep it going.
	var n int
	for time.Since(cut) < testTTL+leasekit.RenewInterval(testTTL) {
		_, err := a.svc.GenId(bg)
		require.NoError(t, err, "%s after a %s outage", time.Since(cut), outage)
		n++
		time.Sleep(100 * time.Microsecond)
	}
	assert.Equal(t, leaseBefore, leaseOf(t, c, keys, 0), "the same lease was renewed, not a new one claimed")
	assert.Equal(t, uint64(0), a.svc.Stats().Fences)
	t.Logf("TTL %s: issued %d IDs without a failure through a %s outage", testTTL, n, outage)
}
