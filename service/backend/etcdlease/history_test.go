package etcdlease_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

func TestUncompactedHistoryWarnsAndClearsAfterCompaction(t *testing.T) {
	t.Parallel()
	// An etcd of its own: the revision count is this test's, and its
	// compaction touches no other test's history.
	endpoint := startOwnEtcd(t)
	c := clientOf(t, endpoint)
	log, logs := capturedLog(t)
	const warnAbove = 200
	lease := newLease(t, "hist", withEndpoint(endpoint), func(o *etcdlease.Options) { o.TTL = 2 * time.Second; o.Logger = log })
	etcdlease.SetHistoryCheck(lease, time.Millisecond, warnAbove) // at every renewal
	svc := startService(t, settings(t, lease, "hist"))
	uncompacted := func() int64 { return svc.Stats().Lease.UncompactedRevisions }

	// The first check only records the revision it starts counting from;
	// the next ones count the node's own writes (a mark each second).
	// Then the writes of others pile up history above the threshold.
	const warning = "etcd keeps every revision: its history is not compacted"
	eventually(t, 10*time.Second, "a history check counted revisions", func() bool { return uncompacted() > 0 })
	require.Less(t, uncompacted(), int64(warnAbove))
	assert.NotContains(t, logs.String(), warning)
	for i := range 3 * warnAbove {
		_, err := c.Put(bg, "/junk/"+strconv.Itoa(i%10), strconv.Itoa(i))
		require.NoError(t, err)
	}
	eventually(t, 10*time.Second, "UncompactedRevisions above the threshold", func() bool { return uncompacted() > warnAbove })
	eventually(t, 10*time.Second, "a warning", func() bool { return strings.Contains(logs.String(), warning) })
	assert.Contains(t, logs.String(), "--auto-compaction-mode=periodic", "the warning says how to fix it")
	high := uncompacted()
	t.Logf("uncompacted revisions seen: %d", high)

	// A compaction at the current revision: the node sees its oldest
	// revision compacted and counts again from there.
	st, err := c.Status(bg, endpoint)
	require.NoError(t, err)
	_, err = c.Compact(bg, st.Header.Revision)
	require.NoError(t, err)
	eventually(t, 10*time.Second, "UncompactedRevisions drops after the compaction", func() bool { return uncompacted() < warnAbove/4 })
	warnings := strings.Count(logs.String(), warning)
	// The next check counts from the compaction: only the node's own
	// writes since (a few a second).
	eventually(t, 10*time.Second, "a history check after the compaction", func() bool { return uncompacted() > 0 })
	assert.Less(t, uncompacted(), int64(warnAbove/4))
	assert.Equal(t, warnings, strings.Count(logs.String(), warning), "no warning after the compaction")
}
