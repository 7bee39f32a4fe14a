package restserver_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// A segment store unreachable at start costs /segment, not the Vesta IDs:
// the server starts and is ready, /segment answers 503 (the reason in the
// log, not in the answer: it names the database's address), and once the
// store can be reached it serves without a restart. The retries, their
// end at Close and what is not retried are the runtime's
// (internal/server/runtime's tests).
func TestSegmentStoreUnreachableAtStart(t *testing.T) {
	var down atomic.Bool
	var attempts atomic.Int32
	down.Store(true)
	open := func(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
		attempts.Add(1)
		if down.Load() {
			return nil, fmt.Errorf("segment mode: dial tcp 127.0.0.1:1: connection refused: %w", intf.ErrUnavailable)
		}
		return restapp.OpenSegments(cfg)(ctx)
	}
	var log syncbuf.Buffer
	cfg := testConfigLog(t, &log, "--segment-tags", "order")
	srv := newServer(cfg, nil, withSegments(cfg, open), restserver.WithSegmentRetry(time.Millisecond, 4*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := serve(t, ctx, srv)
	<-srv.Ready()

	assert.Equal(t, 200, get(t, base+"/genid").status)
	assert.Equal(t, 200, get(t, base+"/readyz").status, "readiness is about the Vesta IDs")
	for _, path := range []string{"/segment/order", "/segment"} {
		r := get(t, base+path)
		require.Equal(t, 503, r.status, path)
		assert.Equal(t, "1", r.header.Get("Retry-After"), path)
		msg, _ := jsonError(t, r)
		assert.Equal(t, "segment store unavailable: retry shortly", msg, path)
		assert.NotContains(t, r.body, "127.0.0.1", path)
	}
	assert.Contains(t, log.String(), "segment mode: dial tcp 127.0.0.1:1: connection refused", "the log keeps the reason")
	require.Eventually(t, func() bool { return attempts.Load() >= 3 }, 10*time.Second, time.Millisecond, "it retries")

	down.Store(false)
	require.Eventually(t, func() bool { return get(t, base+"/segment/order").status == 200 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, "2", get(t, base+"/segment/order").body)
	cancel()
	require.NoError(t, <-done)
}
