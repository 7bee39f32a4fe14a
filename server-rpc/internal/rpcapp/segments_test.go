package rpcapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/segopen"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// A store unreachable at start: SegmentNextIds answers code 6 while the
// store is retried (the reason in the log: it names the database's
// address), then serves without a restart.
func TestSegmentsOpenInTheBackground(t *testing.T) {
	tags, err := segspec.ParseTags("order")
	require.NoError(t, err)
	var logBuf syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
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
	assert.Equal(t, "segment store unavailable: retry shortly", reply.Err.Message)
	assert.Contains(t, logBuf.String(), "dial tcp 127.0.0.1:1: connection refused", "the log keeps the reason")
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

// downStore is a segment store whose database went away after it opened:
// every allocation fails with the driver's error, which names the
// database's address.
type downStore struct{}

var errStoreDown = errors.New("segment store postgres: allocating: failed to connect: 10.1.2.3:5432 (db-7.internal): dial error: connection refused")

func (downStore) Init(context.Context) error { return nil }
func (downStore) Tags(context.Context) ([]segstore.TagInfo, error) {
	return []segstore.TagInfo{{Tag: "order", MaxId: 1, Step: 10}}, nil
}
func (downStore) Alloc(context.Context, string, int64) (int64, int64, error) {
	return 0, 0, errStoreDown
}
func (downStore) CreateTag(context.Context, segstore.TagInfo) error { return nil }
func (downStore) Close() error                                      { return nil }

// A store failing after it opened: SegmentNextIds and SegmentRange answer
// code 6 "segment store unavailable"; the store's error, with the
// database's address, is in the log and nowhere in the reply.
func TestSegmentStoreFailureIsNotTheCallers(t *testing.T) {
	var logBuf syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	cfg := config.Config{Service: service.Settings{Logger: log}, SegmentMaxRange: 1000}
	s, err := openSegments(context.Background(), func(ctx context.Context) (*segment.Generator, error) {
		return segment.New(ctx, segment.Settings{Store: downStore{}, Logger: log, WaitTimeout: time.Millisecond})
	}, segopen.Options{Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	r := rpcapi.NewReceiver(nil, 10, ReceiverOptions(cfg, s)...)

	var ids rpcapi.SegmentReply
	require.NoError(t, r.SegmentNextIds(rpcapi.SegmentArgs{Tag: "order", Count: 2}, &ids))
	var rng rpcapi.SegmentRangeReply
	require.NoError(t, r.SegmentRange(rpcapi.SegmentRangeArgs{Tag: "order", Size: 5}, &rng))
	for name, e := range map[string]*rpcapi.Error{"SegmentNextIds": ids.Err, "SegmentRange": rng.Err} {
		require.NotNil(t, e, name)
		assert.Equal(t, rpcapi.CodeUnavailable, e.Code, name)
		assert.Equal(t, "segment store unavailable: retry shortly", e.Message, name)
		assert.ErrorIs(t, e, intf.ErrUnavailable, name)
	}
	assert.Contains(t, logBuf.String(), "10.1.2.3:5432", "the log keeps the detail")
}
