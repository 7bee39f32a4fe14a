package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/intf"
)

// A burst with --max-borrow runs ahead of the clock; kill -9 in the middle
// of it and an immediate restart on the same data dir repeat no ID, and the
// restart's IDs are above every borrowed one.
//
// Stress only: bursts of 1,600,000 IDs until a batch runs ahead of the
// clock. A plain run covers borrowing by service's borrow tests and the
// kill -9 restart by TestCrashRestartServesAtOnce.
func TestBorrowedBurstSurvivesKill9(t *testing.T) {
	stresstest.Only(t, "bursts of 1,600,000 IDs through the real server-rest, then kill -9")
	// Not parallel: the burst must outrun the clock, so it runs before the
	// parallel tests (Chromium among them), with the CPU to itself.
	dataDir := t.TempDir()
	args := []string{"--listen", "127.0.0.1:0", "--machine", "12", "--data-dir", dataDir, "--max-borrow", "30s",
		"--max-batch", "100000", "--segment-store", "off", "--type", "min-granularity"}
	p := start(t, args...)
	base := p.waitReady(t)
	client := &http.Client{Timeout: 30 * time.Second}
	// Batches of 100,000 from 16 clients at once: each takes about 98 ms
	// of min-granularity time as it is taken, a round 1.6 s, so the burst
	// outruns the clock whenever the server writes the round out in less,
	// as a loaded machine does too; keep on until a batch is ahead.
	l, _ := intf.MinGranularity.Layout()
	nowUnit := func() int64 { return time.Now().UnixMilli() - intf.DefaultEpochMillis }
	var (
		mu       sync.Mutex
		first    []int64
		maxFirst int64
		ahead    bool // some batch carried a time later than when it was read
	)
	deadline := time.Now().Add(30 * time.Second)
	for !ahead && time.Now().Before(deadline) {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				ids, read, err := batchAt(client, base+"/genid?count=100000")
				assert.NoError(t, err)
				mu.Lock()
				defer mu.Unlock()
				first = append(first, ids...)
				for _, id := range ids {
					u := l.Time.Get(uint64(id))
					maxFirst = max(maxFirst, u)
					ahead = ahead || u > read
				}
			})
		}
		wg.Wait()
	}
	require.True(t, ahead, "the burst ran ahead of the clock")
	require.NoError(t, p.cmd.Process.Kill()) // kill -9 right after the burst
	<-p.done
	_ = p.cmd.Wait()

	p = start(t, args...)
	base = p.waitReady(t)
	second, err := takeIds(context.Background(), client, base, 100_000)
	require.NoError(t, err)
	// Plain comparisons in the loops: half a million testify calls cost
	// more than a second.
	seen := make(map[int64]struct{}, len(first)+len(second))
	for _, id := range append(first, second...) {
		if _, dup := seen[id]; dup {
			t.Fatalf("duplicate ID %d", id)
		}
		seen[id] = struct{}{}
	}
	for _, id := range second {
		if u := l.Time.Get(uint64(id)); u <= maxFirst {
			t.Fatalf("the restart starts above every borrowed unit: ID %d has unit %d, a borrowed one %d", id, u, maxFirst)
		}
	}
	assert.LessOrEqual(t, maxFirst, nowUnit()+30_000, "never more than maxBorrow ahead")
	p.stop(t)
}

// batch GETs url and parses one ID per line of a 200 answer.
func batch(client *http.Client, url string) ([]int64, error) {
	ids, _, err := batchAt(client, url)
	return ids, err
}

// batchAt is batch that also returns the min-granularity time unit (ms
// since the epoch) at which the answer had been read.
func batchAt(client *http.Client, url string) ([]int64, int64, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	read := time.Now().UnixMilli() - intf.DefaultEpochMillis
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("%s: %d %s", url, resp.StatusCode, body)
	}
	var ids []int64
	for _, f := range strings.Fields(string(body)) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, read, nil
}

// A crash (kill -9) and an immediate restart do not stall: the restart
// hands out the unit after the stored mark at once instead of waiting for
// the clock to pass the mark's 3 s lead (it logs no wait), and repeats no ID.
func TestCrashRestartServesAtOnce(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	args := []string{"--listen", "127.0.0.1:0", "--machine", "13", "--data-dir", dataDir, "--segment-store", "off"}
	p := start(t, args...)
	base := p.waitReady(t)
	client := &http.Client{Timeout: 30 * time.Second}
	first, err := batch(client, base+"/genid?count=1000")
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Kill())
	<-p.done
	_ = p.cmd.Wait()

	p = start(t, args...)
	base = p.waitReady(t)
	second, err := batch(client, base+"/genid?count=1000")
	require.NoError(t, err)
	assert.NotContains(t, p.logText(), "waiting for the clock", "no stall at start")
	_, l := intf.Decode(intf.Id(first[0]))
	last := l.Time.Get(uint64(first[len(first)-1]))
	for _, id := range second {
		require.Greater(t, id, first[len(first)-1])
		require.Greater(t, l.Time.Get(uint64(id)), last)
	}
	p.stop(t)
}
