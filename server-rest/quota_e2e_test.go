package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A quota counts the IDs of a segment range, not one call: a range is cut
// to the caller's burst, a range of the tag's step too, and a client
// hammering /segment/{tag}/range?size=10000000 gets its burst and its rate
// and no more.
func TestRangeQuotaThroughTheBinary(t *testing.T) {
	t.Parallel()
	const tokCache, tokStep = "vesta_cache-token-for-e2e", "vesta_step-token-for-e2e"
	path := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte(authFile(
		client("cache", tokCache, `"segment:order", metrics`, "    rate: 0.01\n    burst: 1000\n"),
		client("step", tokStep, `"segment:order"`, "    rate: 0.01\n    burst: 300\n"),
	)), 0o600)) // an ID in 100 s: no refill races a loaded machine's calls
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "35", "--data-dir", t.TempDir(), "--auth-file", path,
		"--segment-tags", "order")
	base := p.waitReady(t)
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	size := func(a answer) int64 {
		t.Helper()
		require.Equal(t, http.StatusOK, a.code, a.body)
		var r struct{ Start, End string }
		require.NoError(t, json.Unmarshal([]byte(a.body), &r))
		start, err := strconv.ParseInt(r.Start, 10, 64)
		require.NoError(t, err)
		end, err := strconv.ParseInt(r.End, 10, 64)
		require.NoError(t, err)
		return end - start
	}

	began := time.Now()
	assert.Equal(t, int64(1000), size(do(t, http.DefaultClient, base+"/segment/order/range?size=10000000", bearer(tokCache)...)),
		"cut to the burst")
	a := do(t, http.DefaultClient, base+"/segment/order/range?size=10", bearer(tokCache)...)
	require.Equal(t, http.StatusTooManyRequests, a.code, a.body)
	assert.NotEmpty(t, a.header.Get("Retry-After"))
	assert.Contains(t, jsonField(t, a.body, "error"), `client "cache" is over its quota of 0.01 IDs/s (burst 1000)`)

	// The tag's step (1000 by default) is cut to a burst of 300 too; the
	// next range of the step gets only what the bucket refilled since (an
	// ID in 100 s), nothing when the machine ran the two calls within that.
	emptied := time.Now()
	assert.Equal(t, int64(300), size(do(t, http.DefaultClient, base+"/segment/order/range", bearer(tokStep)...)))
	a = do(t, http.DefaultClient, base+"/segment/order/range", bearer(tokStep)...)
	if a.code == http.StatusOK {
		assert.LessOrEqual(t, float64(size(a)), time.Since(emptied).Seconds()/100, "only the IDs refilled since")
	} else {
		require.Equal(t, http.StatusTooManyRequests, a.code, a.body)
	}

	// The abuse of the issue: 4 connections ask 10^7 IDs in a loop for 2 s.
	var mu sync.Mutex
	var got int64
	var calls, ok int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for time.Since(began) < 2*time.Second {
				a := do(t, http.DefaultClient, base+"/segment/order/range?size=10000000", bearer(tokCache)...)
				mu.Lock()
				calls++
				if a.code == http.StatusOK {
					ok++
					got += size(a)
				} else {
					assert.Equal(t, http.StatusTooManyRequests, a.code, a.body)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	allowed := int64(elapsed.Seconds()/100) + 1 // the rate, an ID in 100 s, since the burst was taken
	t.Logf("in %.1fs a client of 0.01 ID/s (burst 1000) got %d more IDs in %d of %d calls (allowed ≤ %d)",
		elapsed.Seconds(), got, ok, calls, allowed)
	assert.LessOrEqual(t, got, allowed)

	m := do(t, http.DefaultClient, base+"/metrics", bearer(tokCache)...)
	require.Equal(t, http.StatusOK, m.code)
	assert.Equal(t, strconv.FormatInt(1000+got, 10), metric(m.body, `vesta_client_ids_issued_total{client="cache"}`),
		"the client's metric counts the IDs handed out")
	assert.Equal(t, "300", metric(m.body, `vesta_client_ids_issued_total{client="step"}`))
}
