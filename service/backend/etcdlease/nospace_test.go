package etcdlease_test

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
)

// startOwnEtcd starts an etcd for the test alone (a quota, a history of
// its own) and returns its client address; it is closed after the test's
// nodes.
func startOwnEtcd(t *testing.T, configs ...etcdtest.Config) string {
	t.Helper()
	e, err := etcdtest.Start(t.TempDir(), configs...)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e.Clients[0].Addr().String()
}

// clientOf is a client of the etcd at endpoint, the test's hands on it.
func clientOf(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// capturedLog is a logger writing to the test's log and to the buffer
// returned, so that a test can assert what was said.
func capturedLog(t *testing.T) (*slog.Logger, *syncbuf.Buffer) {
	buf := &syncbuf.Buffer{}
	return slog.New(slog.NewTextHandler(io.MultiWriter(leasetest.Writer(t), buf), &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// issueAll calls GenId until it fails, checking that every ID is new, and
// returns how many it issued and the error.
func issueAll(t *testing.T, svc *service.Service, seen map[intf.Id]bool, limit time.Duration) (int, error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	n := 0
	for time.Now().Before(deadline) {
		id, err := svc.GenId(bg)
		if err != nil {
			return n, err
		}
		require.False(t, seen[id], "ID %d issued twice", id)
		seen[id] = true
		n++
	}
	return n, nil
}

func TestNoSpaceKeepsIssuingWithinTheMarkAndRecovers(t *testing.T) {
	t.Parallel()
	const quota = 1 << 20
	// A commit after every write: etcd's quota check reads the backend's
	// size as of the last commit, and by default it commits every 100 ms,
	// so that a fast machine could write past the quota unrefused.
	endpoint := startOwnEtcd(t, func(c *embed.Config) { c.QuotaBackendBytes = quota; c.BackendBatchLimit = 1 })
	c := clientOf(t, endpoint)
	log, logs := capturedLog(t)
	// A TTL of 3 s (renewals every second, valid 2.87 s): the loop below
	// issues flat out on a loaded machine, and the renewals must stay in
	// time for the refusal to be the mark's, not a fence.
	n := startNode(t, "full", withEndpoint(endpoint), func(o *etcdlease.Options) { o.TTL = 3 * time.Second; o.Logger = log })
	keys := n.lease.Keys()
	m := n.svc.Stats().Machine
	seen := map[intf.Id]bool{}
	for range 100 {
		id, err := n.svc.GenId(bg)
		require.NoError(t, err)
		seen[id] = true
	}
	require.False(t, n.svc.Stats().Lease.NoSpace)

	// Fill etcd until its quota refuses a write: it raises the NOSPACE
	// alarm, and from then on refuses every write.
	junk := strings.Repeat("x", 64<<10)
	var filled bool
	for i := 0; i < 4*quota/len(junk); i++ {
		_, err := c.Put(bg, "/junk/"+string(rune('a'+i%26))+strings.Repeat("k", i/26), junk)
		if errors.Is(err, rpctypes.ErrNoSpace) {
			filled = true
			break
		}
		require.NoError(t, err)
	}
	require.True(t, filled, "etcd's %d-byte quota refused a write", quota)
	alarms, err := c.AlarmList(bg)
	require.NoError(t, err)
	require.NotEmpty(t, alarms.Alarms, "the NOSPACE alarm is raised")

	eventually(t, 10*time.Second, "Stats().Lease.NoSpace", func() bool { return n.svc.Stats().Lease.NoSpace })
	assert.Contains(t, logs.String(), "etcd is out of space (NOSPACE alarm)", "said loudly")
	assert.Contains(t, logs.String(), "level=ERROR msg=\"etcdlease: etcd is out of space")

	// It issues while the mark stored before the alarm lasts, then
	// refuses: the lease is still renewed (a keep-alive is no write), so
	// it is not fenced, but no mark covers the clock any more.
	issued, err := issueAll(t, n.svc, seen, 30*time.Second)
	require.Error(t, err, "issuing stops once the stored mark is passed")
	t.Logf("under NOSPACE: %d IDs issued within the stored mark, then: %v", issued, err)
	assert.Positive(t, issued, "issuing went on under NOSPACE while the stored mark lasted")
	assert.ErrorIs(t, err, intf.ErrNotPersisted)
	assert.NotErrorIs(t, err, intf.ErrFenced, "the lease is still renewed")
	assert.True(t, n.svc.Stats().LeaseHeld, "still held")
	var last intf.Id
	for id := range seen {
		last = max(last, id)
	}
	assert.LessOrEqual(t, timeUnit(last), unitOfMs(intf.MaxPeak, markOf(t, c, keys, m)), "no ID above the mark in etcd")
	_, err = n.svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrNotPersisted, "still refused while etcd is full")

	// Free the space: delete the junk, compact, defragment, disarm.
	_, err = c.Delete(bg, "/junk/", clientv3.WithPrefix())
	require.NoError(t, err)
	st, err := c.Status(bg, endpoint)
	require.NoError(t, err)
	_, err = c.Compact(bg, st.Header.Revision, clientv3.WithCompactPhysical())
	require.NoError(t, err)
	_, err = c.Defragment(bg, endpoint)
	require.NoError(t, err)
	for _, a := range alarms.Alarms {
		_, err := c.AlarmDisarm(bg, (*clientv3.AlarmMember)(a))
		require.NoError(t, err)
	}

	// The node notices by itself and issues again, above every ID before.
	eventually(t, 10*time.Second, "issuing again once space is freed", func() bool {
		_, err := n.svc.GenId(bg)
		return err == nil
	})
	eventually(t, 10*time.Second, "Stats().Lease.NoSpace cleared", func() bool { return !n.svc.Stats().Lease.NoSpace })
	assert.Contains(t, logs.String(), "etcd accepts writes again (NOSPACE cleared)")
	for range 100 {
		id, err := n.svc.GenId(bg)
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d issued twice", id)
		assert.Greater(t, id, last)
		seen[id] = true
	}
	assert.Equal(t, m, n.svc.Stats().Machine, "the same machine id throughout")
	assert.Zero(t, n.svc.Stats().Fences, "never fenced")
}
