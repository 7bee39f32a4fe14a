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
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// segmentRuntime is a started runtime serving the segment mode open
// opens, as NewRuntime's (its ID service a real one without a data dir),
// closed at the test's end.
func segmentRuntime(t *testing.T, log *slog.Logger, open func(context.Context) (*segment.Generator, error), retry time.Duration) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(runtime.Options{Logger: log, SegmentAnswer: "SegmentNextIds: code 6",
		SegmentRetryMin: retry, SegmentRetryMax: 4 * retry,
		OpenSegments: func(ctx context.Context) (runtime.Segments, error) {
			g, err := open(ctx)
			if err != nil || g == nil {
				return nil, err
			}
			return g, nil
		},
		Start: func(ctx context.Context) (runtime.Service, error) {
			return service.New(ctx, service.Settings{Machine: 1, NoDataDir: true, Logger: log})
		},
	})
	require.NoError(t, rt.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt
}

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
	rt := segmentRuntime(t, log, func(ctx context.Context) (*segment.Generator, error) {
		attempts.Add(1)
		if down.Load() {
			return nil, fmt.Errorf("dial tcp 127.0.0.1:1: connection refused: %w", intf.ErrUnavailable)
		}
		return app.OpenSegments(ctx, cfg)
	}, time.Millisecond)

	r := rpcapi.NewReceiver(nil, 10, ReceiverOptions(cfg, rt)...)
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

// Segment mode off is code 11 (rpcapi.ErrSegmentOff), as before the
// runtime.
func TestSegmentsOff(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	rt := segmentRuntime(t, log, func(context.Context) (*segment.Generator, error) { return nil, nil }, time.Millisecond)
	r := rpcapi.NewReceiver(nil, 10, ReceiverOptions(config.Config{}, rt)...)
	var reply rpcapi.SegmentReply
	require.NoError(t, r.SegmentNextIds(rpcapi.SegmentArgs{Tag: "order", Count: 2}, &reply))
	require.NotNil(t, reply.Err)
	assert.Equal(t, rpcapi.CodeSegmentOff, reply.Err.Code)
	// The door's own mapping, for a receiver built before the runtime
	// knew segment mode was off.
	_, err := segmentDoor{rt}.NextIds(context.Background(), "order", 1)
	assert.ErrorIs(t, err, rpcapi.ErrSegmentOff)
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
	rt := segmentRuntime(t, log, func(ctx context.Context) (*segment.Generator, error) {
		return segment.New(ctx, segment.Settings{Store: downStore{}, Logger: log, WaitTimeout: time.Minute})
	}, time.Second)
	r := rpcapi.NewReceiver(nil, 10, ReceiverOptions(cfg, rt)...)

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
