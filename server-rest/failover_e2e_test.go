package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/service/backend/pgtest"
)

// segmentBatch asks base for n IDs of tag: the IDs, or the status and body
// of a refusal.
func segmentBatch(ctx context.Context, client *http.Client, base, tag string, n int) ([]int64, int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/segment/"+tag+"?count="+strconv.Itoa(n), nil)
	if err != nil {
		return nil, 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, string(body), nil
	}
	var ids []int64
	for _, f := range strings.Fields(string(body)) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, 0, "", fmt.Errorf("%q: %w", f, err)
		}
		ids = append(ids, id)
	}
	return ids, resp.StatusCode, "", nil
}

// maxIdOn reads the tag's max_id on one server (a standby answers reads).
func maxIdOn(t *testing.T, s *pgtest.Server, tag string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var maxId int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT max_id FROM leaf_alloc WHERE biz_tag = $1", tag).Scan(&maxId))
	return maxId
}

// Two server-rest processes share a PostgreSQL primary with a synchronous
// standby, through a DSN naming both. Under load, the primary stops as in
// a crash (pg_ctl stop -m immediate) and the standby is promoted: both
// servers go on serving from the new primary by themselves, every ID
// before and after is unique, and each server's IDs keep increasing.
// The time to recover is printed (go test -tags stress -v -run
// TestSegmentFailover ./server-rest/; docs/benchmarks.md).
//
// Stress only: a PostgreSQL primary and standby and two servers under
// load. A plain run covers the failover by pgstore's
// TestFailoverSynchronousStandby.
func TestSegmentFailoverTwoServers(t *testing.T) {
	stresstest.Only(t, "a PostgreSQL primary and standby, two real servers under load, a promotion")
	t.Parallel() // its own cluster and server processes
	c := pgtest.NewCluster(t, pgtest.ClusterOptions{Sync: true})
	const tag = "order"
	var servers [2]*process
	var bases [2]string
	for i := range servers {
		// Started one after the other: the second finds the table and
		// the tag made by the first.
		servers[i] = start(t, "--listen", "127.0.0.1:0", "--machine", strconv.Itoa(i+1), "--data-dir", t.TempDir(),
			"--segment-store", "postgres", "--segment-dsn", c.DSN("postgres"), "--segment-tags", tag+":1:100")
		bases[i] = servers[i].waitReady(t)
	}

	const batch = 200
	var (
		mu        sync.Mutex
		ids       [2][]int64
		failed    [2]int
		firstNew  [2]time.Time // first response with an ID of the new primary
		newFrom   atomic.Int64 // IDs at or above it come from the new primary; 0 before the stop
		ctx, stop = context.WithCancel(context.Background())
		wg        sync.WaitGroup
	)
	defer stop()
	for i, base := range bases {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			for ctx.Err() == nil {
				got, status, body, err := segmentBatch(ctx, client, base, tag, batch)
				now := time.Now()
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					t.Errorf("server %d: %v", i, err)
					return
				}
				mu.Lock()
				if got == nil {
					// Only while no range can be had: 503.
					if status != http.StatusServiceUnavailable {
						t.Errorf("server %d: %d %s", i, status, body)
					}
					failed[i]++
				} else {
					ids[i] = append(ids[i], got...)
					if n := newFrom.Load(); n != 0 && got[len(got)-1] >= n && firstNew[i].IsZero() {
						firstNew[i] = now
					}
				}
				mu.Unlock()
				if got == nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	count := func(i int) int {
		mu.Lock()
		defer mu.Unlock()
		return len(ids[i])
	}
	// Load before the failover, while the dynamic step is still small
	// (100, doubling per range): the buffers hold a few thousand IDs.
	require.Eventually(t, func() bool { return count(0) >= 2000 && count(1) >= 2000 }, 20*time.Second, 5*time.Millisecond)

	stopAt := time.Now()
	require.NoError(t, c.Primary.StopImmediate(ctx))
	// Nothing reaches the standby any more: what it holds is every range
	// the old primary confirmed, and the new primary hands out ranges
	// from there.
	newFrom.Store(maxIdOn(t, c.Standby, tag))
	promoteAt := time.Now()
	require.NoError(t, c.Standby.Promote(ctx))
	promoted := time.Since(promoteAt)

	var recovered [2]time.Duration
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !firstNew[0].IsZero() && !firstNew[1].IsZero()
	}, 25*time.Second, 5*time.Millisecond, "both servers serve from the new primary\n%s", c.Logs())
	mu.Lock()
	for i := range recovered {
		recovered[i] = firstNew[i].Sub(stopAt)
	}
	after := [2]int{len(ids[0]), len(ids[1])}
	mu.Unlock()
	// And go on doing it.
	require.Eventually(t, func() bool { return count(0) >= after[0]+2000 && count(1) >= after[1]+2000 }, 20*time.Second, 5*time.Millisecond)
	stop()
	wg.Wait()

	seen := make(map[int64]int, len(ids[0])+len(ids[1]))
	for i, list := range ids {
		for k, id := range list {
			if k > 0 && id <= list[k-1] {
				t.Fatalf("server %d: ID %d after %d: not increasing", i, id, list[k-1])
			}
			if j, dup := seen[id]; dup {
				t.Fatalf("ID %d issued by server %d and server %d", id, j, i)
			}
			seen[id] = i
		}
	}
	t.Logf("failover of the segment store under two server-rest processes: %d + %d IDs, all unique, each server's increasing; "+
		"pg_ctl promote took %s; time to recover (primary stopped -> first ID from the new primary): server 1 %s, server 2 %s; "+
		"%d + %d requests answered 503 meanwhile",
		len(ids[0]), len(ids[1]), promoted.Round(time.Millisecond), recovered[0].Round(time.Millisecond),
		recovered[1].Round(time.Millisecond), failed[0], failed[1])
	for i, p := range servers {
		p.stop(t)
		// Whether a load failed depends on timing (a load may wait for a
		// connection until the standby is promoted): said, not asserted.
		// That both served from the new primary is asserted above.
		t.Logf("server %d logged a failed load: %v", i+1, strings.Contains(p.logText(), "segment: loading a range failed"))
	}
}

// A DSN naming two servers whose primary replicates asynchronously stops
// server-rest at start, with an error that says why and what to set;
// with segmentAllowAsyncFailover it starts, warns and serves.
//
// Stress only: a PostgreSQL primary and standby of its own. A plain run
// covers the refusal by pgstore's TestFailoverAsynchronousStandby.
func TestSegmentAsyncFailoverRefusedAtStart(t *testing.T) {
	stresstest.Only(t, "a PostgreSQL primary and asynchronous standby for two real server runs")
	t.Parallel() // its own cluster and server processes
	c := pgtest.NewCluster(t, pgtest.ClusterOptions{Sync: false})
	args := []string{"--listen", "127.0.0.1:0", "--machine", "5", "--data-dir", t.TempDir(),
		"--segment-store", "postgres", "--segment-dsn", c.DSN("postgres"), "--segment-tags", "order"}

	p := start(t, args...)
	<-p.done
	err := p.cmd.Wait()
	require.Error(t, err, "refused; log:\n%s", p.logText())
	assert.Equal(t, 1, p.cmd.ProcessState.ExitCode())
	log := p.logText()
	assert.Contains(t, log, "synchronous_standby_names is empty")
	assert.Contains(t, log, "segmentAllowAsyncFailover: true")

	p = start(t, append(args, "--segment-allow-async-failover")...)
	base := p.waitReady(t)
	got, status, body, err := segmentBatch(context.Background(), http.DefaultClient, base, "order", 3)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []int64{1, 2, 3}, got)
	p.stop(t)
	assert.Contains(t, p.logText(), "replication is asynchronous; allowed by segmentAllowAsyncFailover")
}
