package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

// A quota counts the IDs of SegmentRange, not one call: a range is cut to
// the caller's burst, and a client asking 10^7 IDs a call in a loop gets
// its burst and its rate (on the previous main: 6 × 10^10 IDs in 5 s).
func TestRangeQuotaThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	const tokCache = "vesta_rpc-cache-token"
	bin := rpctest.BuildServerRPC(t)
	auth := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(fmt.Sprintf(`clients:
  - name: cache
    tokenSHA256: %s
    scopes: ["segment:order"]
    rate: 0.01
    burst: 1000
`, access.HashTokenHex(tokCache))), 0o600)) // an ID in 100 s: no refill races a loaded machine's calls
	p := startRPC(t, bin, "--listen", "127.0.0.1:0", "--machine", "12", "--data-dir", t.TempDir(),
		"--segment-tags", "order", "--auth-file", auth, "--reload-interval", "0")
	dial := func() *rpcapi.Conn {
		nc, err := net.Dial("tcp", p.addr)
		require.NoError(t, err)
		c := rpcapi.NewNetConn(nc, rpcapi.ServiceName, rpcapi.WithToken(tokCache))
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	began := time.Now()
	c := dial()
	r, err := c.NextRange(ctx, "order", 10_000_000)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), r.Size(), "cut to the burst")
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = c.NextRange(short, "order", 10)
	cancelShort()
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "the range took the whole burst")
	assert.Equal(t, "cache", rl.Client)

	var mu sync.Mutex
	var got int64
	var calls, ok int
	var wg sync.WaitGroup
	for range 4 {
		conn := dial()
		wg.Go(func() {
			for time.Since(began) < 2*time.Second {
				call, cancel := context.WithTimeout(ctx, 2*time.Second)
				r, err := conn.NextRange(call, "order", 10_000_000)
				cancel()
				mu.Lock()
				calls++
				if err == nil {
					ok++
					got += r.Size()
				} else {
					assert.ErrorIs(t, err, intf.ErrRateLimited)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	allowed := int64(elapsed.Seconds()/100) + 1
	t.Logf("in %.1fs a client of 0.01 ID/s (burst 1000) got %d more IDs in %d of %d calls (allowed ≤ %d)",
		elapsed.Seconds(), got, ok, calls, allowed)
	assert.LessOrEqual(t, got, allowed)
	p.stop(t)
}
