package rpcapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segopen"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/intf/rpcapi"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// A store unreachable at start: SegmentNextIds answers code 6 naming the
// reason while the store is retried, then serves without a restart.
func TestSegmentsOpenInTheBackground(t *testing.T) {
	tags, err := segspec.ParseTags("order")
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Config{Service: service.Settings{Logger: log},
		Segment: config.Segment{Store: segspec.SQLite, DataDir: t.TempDir(), Tags: tags}}
	var down atomic.Bool
	var attempts atomic.Int32
	down.Store(true)
	s, err := openSegments(context.Background(), func(ctx context.Context) (*segment.Generator, error) {
		attempts.Add(1)
		if down.Load() {
			return nil, fmt.Errorf("dial tcp 127.0.0.1:1: connection refused: %w", intf.ErrUnavailable)
		}
		return app.OpenSegments(ctx, cfg)
	}, segopen.Options{Logger: log, RetryMin: time.Millisecond, RetryMax: 4 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	r := rpcapi.NewReceiver(nil, 10, ReceiverOptions(cfg, s)...)
	var reply rpcapi.SegmentReply
	require.NoError(t, r.SegmentNextIds(rpcapi.SegmentArgs{Tag: "order", Count: 2}, &reply))
	require.NotNil(t, reply.Err)
	assert.Equal(t, rpcapi.CodeUnavailable, reply.Err.Code)
	assert.Contains(t, reply.Err.Message, "segment store unreachable: dial tcp 127.0.0.1:1: connection refused")
	require.Eventually(t, func() bool { return attempts.Load() >= 3 }, 10*time.Second, time.Millisecond, "it retries")

	down.Store(false)
	require.Eventually(t, func() bool {
		var reply rpcapi.SegmentReply
		require.NoError(t, r.SegmentNextIds(rpcapi.SegmentArgs{Tag: "order", Count: 2}, &reply))
		return reply.Err == nil && len(reply.Ids) == 2
	}, 10*time.Second, time.Millisecond)
}

// Only unreachability is retried: another error fails the start at once.
func TestSegmentsPermanentErrorFailsStart(t *testing.T) {
	boom := errors.New("password authentication failed")
	var attempts atomic.Int32
	s, err := openSegments(context.Background(),
		func(context.Context) (*segment.Generator, error) { attempts.Add(1); return nil, boom },
		segopen.Options{RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	require.ErrorIs(t, err, boom)
	require.NoError(t, s.Close())
	assert.Equal(t, int32(1), attempts.Load())
}

// close ends the retries of a store that never opens.
func TestSegmentsCloseStopsRetries(t *testing.T) {
	var attempts atomic.Int32
	s, err := openSegments(context.Background(), func(context.Context) (*segment.Generator, error) {
		attempts.Add(1)
		return nil, intf.ErrUnavailable
	}, segopen.Options{Logger: slog.New(slog.DiscardHandler), RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return attempts.Load() >= 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, s.Close()) // returns: it waited for the retries to end
}
