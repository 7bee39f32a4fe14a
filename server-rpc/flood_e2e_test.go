package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/stresstest"
)

// A flood of idle connections on the RPC port and on the admin listener,
// from many addresses each under maxConnsPerIP, on a server that may open
// 512 files: both hold at most what fits beside the service's own files,
// so a client keeps getting IDs (the mark stored), and a scraper its
// metrics (on the previous main: "too many open files", RPC calls failing
// with "time high-water mark not persisted").
// Fast cover: internal/connlimit, rpcserver's eviction test (the idle
// flood over max-conns) and internal/server/app.TestFitConns.
func TestConnectionFloodThroughTheBinary(t *testing.T) {
	stresstest.Only(t, "1,200 connections flooding a real server-rpc until it has closed 700 (both cores busy)")
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	p := startRPC(t, "sh", "-c", `ulimit -n 512 && exec "$0" "$@"`, bin, "--listen", "127.0.0.1:0",
		"--admin-listen", "127.0.0.1:0", "--machine", "13", "--data-dir", t.TempDir())
	admin := "http://" + p.adminAddr(t)
	assert.Contains(t, p.log.String(), `msg="vesta: file descriptors" limit=512 reservedForTheService=128 maxConns=320 adminMaxConns=64`)

	rpcFlood := nettest.StartFlood(p.addr, 20, 40)                                 // 800 on the RPC port
	adminFlood := nettest.StartFlood(strings.TrimPrefix(admin, "http://"), 10, 40) // 400 on the admin listener
	t.Cleanup(func() { rpcFlood.Stop(); adminFlood.Stop() })

	c, err := client.New([]string{p.addr}, client.WithCallTimeout(3*time.Second))
	require.NoError(t, err)
	defer c.Close()
	scraper := &http.Client{Timeout: 3 * time.Second}
	// The flood goes on until both ports have closed many connections over
	// their caps and the client has made its calls and the scraper its
	// scrapes, however long a busy machine takes; the guard only ends a
	// server that stopped answering.
	const minCalls, scrapeEvery = 100, 10
	floodOn := func() bool { return rpcFlood.Stats().Closed > 400 && adminFlood.Stats().Closed > 300 }
	var took []time.Duration
	calls, ok, scrapes, scraped := 0, 0, 0, 0
	for guard := time.Now().Add(3 * time.Minute); calls < minCalls || !floodOn(); {
		require.True(t, time.Now().Before(guard), "after 3 minutes: %d calls; flood on the RPC port: %s; on the admin listener: %s",
			calls, rpcFlood.Stats(), adminFlood.Stats())
		call, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		t0 := time.Now()
		_, err := c.GenIds(call, 10)
		took = append(took, time.Since(t0))
		cancel()
		calls++
		if err == nil {
			ok++
		} else {
			t.Logf("call: %v", err)
		}
		if calls%scrapeEvery == 0 {
			scrapes++
			if resp, err := scraper.Get(admin + "/metrics"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					scraped++
				}
			}
		}
	}
	flood := [2]nettest.FloodStats{rpcFlood.Stop(), adminFlood.Stop()}
	slices.Sort(took)
	t.Logf("flood on the RPC port: %s; on the admin listener: %s", flood[0], flood[1])
	t.Logf("the client: %d of %d GenIds calls succeeded (%.2f%%), p50 %s, p99 %s; the scraper: %d of %d /metrics",
		ok, calls, 100*float64(ok)/float64(calls), took[len(took)/2], took[len(took)*99/100], scraped, scrapes)
	assert.Greater(t, flood[0].Closed, int64(400), "the RPC port closed the connections over its cap")
	assert.Greater(t, flood[1].Closed, int64(300), "the admin listener closed the connections over its cap")
	assert.GreaterOrEqual(t, float64(ok)/float64(calls), 0.99)
	assert.GreaterOrEqual(t, 10*scraped, 9*scrapes, "9 scrapes in 10 answered")
	assert.GreaterOrEqual(t, scrapes, minCalls/scrapeEvery)
	log := p.stop(t)
	assert.NotContains(t, log, "too many open files")
	assert.NotContains(t, log, "not persisted")
}
