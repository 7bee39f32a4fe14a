package main

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

	"github.com/vesta-go/vesta/internal/app"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcapi"
	"github.com/vesta-go/vesta/service/config"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/stores"
)

// A store unreachable at start: SegmentNextIds answers code 6 naming the
// reason while the store is retried, then serves without a restart.
func TestSegmentsOpenInTheBackground(t *testing.T) {
	tags, err := segment.ParseTags("order")
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Config{Segment: stores.Config{Store: stores.SQLite, DataDir: t.TempDir(), Tags: tags,
		Settings: segment.Settings{Logger: log}}}
	var down atomic.Bool
	var attempts atomic.Int32
	down.Store(true)
	s := &segments{log: log, min: time.Millisecond, max: 4 * time.Millisecond,
		open: func(ctx context.Context) (*segment.Generator, error) {
			attempts.Add(1)
			if down.Load() {
				return nil, fmt.Errorf("dial tcp 127.0.0.1:1: connection refused: %w", intf.ErrUnavailable)
			}
			return app.OpenSegments(ctx, cfg)
		}}
	require.NoError(t, s.start(context.Background()))
	t.Cleanup(func() { require.NoError(t, s.close()) })

	r := rpcapi.NewReceiver(nil, 10, receiverOptions(cfg, s)...)
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
	s := &segments{min: time.Millisecond, max: time.Millisecond,
		open: func(context.Context) (*segment.Generator, error) { attempts.Add(1); return nil, boom }}
	require.ErrorIs(t, s.start(context.Background()), boom)
	require.NoError(t, s.close())
	assert.Equal(t, int32(1), attempts.Load())
}

// close ends the retries of a store that never opens.
func TestSegmentsCloseStopsRetries(t *testing.T) {
	var attempts atomic.Int32
	s := &segments{log: slog.New(slog.DiscardHandler), min: time.Millisecond, max: time.Millisecond,
		open: func(context.Context) (*segment.Generator, error) {
			attempts.Add(1)
			return nil, intf.ErrUnavailable
		}}
	require.NoError(t, s.start(context.Background()))
	require.Eventually(t, func() bool { return attempts.Load() >= 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, s.close()) // returns: it waited for the retries to end
}
