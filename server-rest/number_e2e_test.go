package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// createPeriodTags creates period tags prefix0..prefix9 in the data dir's
// SQLite file, as vesta-segment create-tag --group does from its own
// process.
func createPeriodTags(t *testing.T, dataDir, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	st, err := stores.OpenStore(ctx, stores.Config{DataDir: dataDir, OnDemand: true})
	require.NoError(t, err)
	defer st.Close()
	ps, err := segstore.PeriodStoreOf(st)
	require.NoError(t, err)
	var tags []string
	for i := range 10 {
		tag := fmt.Sprintf("%s%d", prefix, i)
		require.NoError(t, ps.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: tag, Group: segstore.GroupDay,
			Format: fmt.Sprintf("%s{yyyyMMdd}{seq:6}", tag), Step: 10}))
		tags = append(tags, tag)
	}
	return tags
}

// getTogether sends GET base/number/<tag> for every tag at the same
// moment and returns each status and body.
func getTogether(t *testing.T, base string, tags []string) ([]int, []string) {
	t.Helper()
	statuses, bodies := make([]int, len(tags)), make([]string, len(tags))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, tag := range tags {
		wg.Go(func() {
			<-start
			statuses[i], bodies[i] = fetch(t, base+"/number/"+tag)
		})
	}
	close(start)
	wg.Wait()
	return statuses, bodies
}

// Ten period tags first asked at the same moment all answer 200 at once,
// whether they were made before the server started or while it runs: the
// reread one request's miss causes registers every period tag, so the
// others are not told "unknown" by the reread's throttle.
func TestPeriodTagsFirstAskedTogether(t *testing.T) {
	t.Parallel() // its own server process, data dir and port
	dataDir := t.TempDir()
	before := createPeriodTags(t, dataDir, "pre")
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "5", "--data-dir", dataDir)
	base := p.waitReady(t)
	statuses, bodies := getTogether(t, base, before)
	for i := range before {
		assert.Equal(t, http.StatusOK, statuses[i], "%s: %s", before[i], bodies[i])
	}

	// Made while it runs: once one of them is served (the first request
	// within a second of the last reread may not see it), the rest are.
	later := createPeriodTags(t, dataDir, "run")
	require.Eventually(t, func() bool {
		status, _ := fetch(t, base+"/number/"+later[0])
		return status == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond)
	statuses, bodies = getTogether(t, base, later[1:])
	for i := range later[1:] {
		assert.Equal(t, http.StatusOK, statuses[i], "%s: %s", later[1+i], bodies[i])
	}
	p.stop(t)
}
