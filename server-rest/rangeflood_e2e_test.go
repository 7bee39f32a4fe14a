package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/service/backend/pgtest"
	"github.com/vesta-go/vesta/service/backend/stores"
)

// floodResult is what a range flood got.
type floodResult struct {
	handed, calls, ok int64
	elapsed           time.Duration // from before the first call to after the last answer
}

// rangeFlood has callers goroutines on each of addrs addresses
// (127.0.0.1, 127.0.0.2, ...) ask base's /segment/{tag}/range of the tag's
// step with tok, again and again for window: half of them at once after a
// 429, half after its exact retryAfter (so that they come back together).
func rangeFlood(t *testing.T, base, tag, tok string, addrs, callers int, window time.Duration) floodResult {
	t.Helper()
	var res floodResult
	var handed, calls, ok atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for a := range addrs {
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(a+1))}, Timeout: 5 * time.Second}
		client := &http.Client{Timeout: 10 * time.Second,
			Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: callers}}
		defer client.CloseIdleConnections()
		for i := range callers {
			wg.Go(func() {
				for time.Since(began) < window {
					n, wait, err := askRange(client, base+"/segment/"+tag+"/range", tok)
					calls.Add(1)
					if err != nil {
						t.Error(err)
						return
					}
					if n > 0 {
						ok.Add(1)
						handed.Add(n)
					} else if i%2 == 1 {
						// The attacker keeps to Retry-After, to come back with the others.
						time.Sleep(min(wait, window-time.Since(began)))
					}
				}
			})
		}
	}
	wg.Wait()
	res.elapsed = time.Since(began)
	res.handed, res.calls, res.ok = handed.Load(), calls.Load(), ok.Load()
	return res
}

// askRange asks url for a range with tok: its size, or 0 and the wait a
// 429 asked for.
func askRange(client *http.Client, url, tok string) (int64, time.Duration, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		var r struct{ RetryAfter float64 }
		if err := json.Unmarshal(body, &r); err != nil || r.RetryAfter <= 0 {
			return 0, 0, fmt.Errorf("%s: a 429 without retryAfter: %q", url, body)
		}
		return 0, time.Duration(r.RetryAfter * float64(time.Second)), nil
	case http.StatusOK:
	default:
		return 0, 0, fmt.Errorf("%s: %d %s", url, resp.StatusCode, body)
	}
	var r struct{ Start, End string }
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, 0, fmt.Errorf("%s: %q: %w", url, body, err)
	}
	start, err1 := strconv.ParseInt(r.Start, 10, 64)
	end, err2 := strconv.ParseInt(r.End, 10, 64)
	if err1 != nil || err2 != nil || end <= start {
		return 0, 0, fmt.Errorf("%s: not a range: %q", url, body)
	}
	return end - start, 0, nil
}

// maxIdOf reads the tag's max_id in the store cfg names: how far the
// database has handed out.
func maxIdOf(t *testing.T, cfg stores.Config, tag string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := stores.OpenStore(ctx, cfg)
	require.NoError(t, err)
	defer st.Close()
	tags, err := st.Tags(ctx)
	require.NoError(t, err)
	for _, ti := range tags {
		if ti.Tag == tag {
			return ti.MaxId
		}
	}
	t.Fatalf("tag %q not in the store", tag)
	return 0
}

// rangeQuotaFlood starts a server-rest on store with a client of rate
// IDs/s and burst, floods it with ranges of the tag's step (1,000) from
// addrs × callers for window, and checks that the IDs handed out stay
// within rate × elapsed + burst and that the database drew no more than
// was handed out (nothing else asks the tag, so no buffer prefetches).
func rangeQuotaFlood(t *testing.T, store stores.Config, rate, burst int64, addrs, callers int, window time.Duration) {
	const tok, tag = "vesta_flood-token-for-e2e", "order"
	path := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte(authFile(
		client("flood", tok, `"segment:order", metrics`, fmt.Sprintf("    rate: %d\n    burst: %d\n", rate, burst)),
	)), 0o600))
	args := []string{"--listen", "127.0.0.1:0", "--machine", "36", "--data-dir", store.DataDir, "--auth-file", path,
		"--segment-tags", tag}
	if store.Store != "" {
		args = append(args, "--segment-store", store.Store, "--segment-dsn", store.DSN)
	}
	p := start(t, args...)
	base := p.waitReady(t)
	before := maxIdOf(t, store, tag)

	res := rangeFlood(t, base, tag, tok, addrs, callers, window)
	drawn := maxIdOf(t, store, tag) - before
	allowed := float64(burst) + float64(rate)*res.elapsed.Seconds()
	t.Logf("%s: %d addresses × %d callers, %.2f s: %d IDs handed out in %d ranges of %d calls (rate × t + burst = %.0f); "+
		"the database drew %d", storeName(store), addrs, callers, res.elapsed.Seconds(), res.handed, res.ok, res.calls, allowed, drawn)
	assert.Positive(t, res.handed)
	assert.LessOrEqual(t, float64(res.handed), allowed, "IDs handed out within rate × elapsed + burst")
	assert.LessOrEqual(t, drawn, res.handed, "the database drew no more than was handed out (no prefetch: no other call)")

	m := do(t, http.DefaultClient, base+"/metrics", "Authorization", "Bearer "+tok)
	require.Equal(t, http.StatusOK, m.code)
	assert.Equal(t, strconv.FormatInt(res.handed, 10), metric(m.body, `vesta_client_ids_issued_total{client="flood"}`))
	p.stop(t)
}

// storeName names the store of c.
func storeName(c stores.Config) string {
	if c.Store == "" {
		return "sqlite"
	}
	return c.Store
}

// Many callers from several addresses asking ranges of the tag's step at
// once get no more than the token's quota, and the database draws no more
// than they get. (Charged one ID before the store was asked and the rest
// after, such ranges all passed at once: each got the burst, and each
// drew a whole step.)
func TestRangeQuotaUnderConcurrency(t *testing.T) {
	t.Parallel()
	rangeQuotaFlood(t, stores.Config{DataDir: t.TempDir()}, 100, 100, 4, 16, 1500*time.Millisecond)
}

// The measure: a token of 100 IDs/s (burst 100), 8 addresses ×
// 32 callers for 10 s, on SQLite and PostgreSQL. The figures are logged:
//
//	go test -tags stress -count=1 -v -run TestRangeQuotaFloodFigures ./server-rest/
//
// Stress only: 256 callers for 10 s per store; TestRangeQuotaUnderConcurrency
// is its plain run.
func TestRangeQuotaFloodFigures(t *testing.T) {
	stresstest.Only(t, "256 callers for 10 s, on SQLite and on PostgreSQL")
	t.Run("sqlite", func(t *testing.T) {
		rangeQuotaFlood(t, stores.Config{DataDir: t.TempDir()}, 100, 100, 8, 32, 10*time.Second)
	})
	t.Run("postgres", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg, err := pgtest.Start(ctx, pgtest.Options{})
		if err != nil {
			t.Skipf("no PostgreSQL: %v", err)
		}
		t.Cleanup(func() { _ = pg.Destroy() })
		rangeQuotaFlood(t, stores.Config{Store: "postgres", DSN: pg.DSN("postgres"), DataDir: t.TempDir()}, 100, 100, 8, 32, 10*time.Second)
	})
}
