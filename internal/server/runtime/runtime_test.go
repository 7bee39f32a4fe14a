package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/segopen"
	"github.com/vesta-go/vesta/internal/server/statuspage"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// fakeService is an ID service whose lease can be lost; it counts its
// closes.
type fakeService struct {
	intf.IdService
	held   atomic.Bool
	closes atomic.Int32
}

func newFakeService() *fakeService {
	s := &fakeService{}
	s.held.Store(true)
	return s
}

func (s *fakeService) Stats() service.Stats {
	return service.Stats{LeaseHeld: s.held.Load(), Machine: 5}
}
func (s *fakeService) Settings() service.Settings { return service.Settings{Machine: 5} }
func (s *fakeService) Close() error               { s.closes.Add(1); return nil }

// fakeSegments is segment mode whose calls fail with err; it counts its
// closes.
type fakeSegments struct {
	Segments
	err    error
	closes atomic.Int32
}

func (s *fakeSegments) NextIds(context.Context, string, int) ([]int64, error) {
	if s.err != nil {
		return nil, s.err
	}
	return []int64{1}, nil
}
func (s *fakeSegments) Step(context.Context, string) (int64, error) { return 0, s.err }
func (s *fakeSegments) Tags() []string                              { return []string{"order"} }
func (s *fakeSegments) Status(string) (segbuf.Status, error)        { return segbuf.Status{}, nil }
func (s *fakeSegments) Close() error                                { s.closes.Add(1); return nil }

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// health is the readiness in one string: status, and why when not ready.
func health(r *Runtime) string {
	h := r.Health()
	if h.Error == "" {
		return h.Status
	}
	return h.Status + ": " + h.Error
}

// The runtime opens segment mode first, then the ID service, making each
// available as it comes; the readiness follows: starting (segment mode,
// then the service), ready, fenced while the lease is lost, stopping
// once the drain begins. Close closes the service, then segment mode,
// once.
func TestStartServeDrainClose(t *testing.T) {
	segsGo, svcGo := make(chan struct{}), make(chan struct{})
	segs, svc := &fakeSegments{}, newFakeService()
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	r := New(Options{Logger: quiet(),
		OpenSegments: func(ctx context.Context) (Segments, error) { <-segsGo; note("segments"); return segs, nil },
		Start:        func(ctx context.Context) (Service, error) { <-svcGo; note("service"); return svc, nil },
	})
	started := make(chan error, 1)
	go func() { started <- r.Start(context.Background()) }()

	assert.Equal(t, "starting: "+ErrSegmentsStarting.Error(), health(r))
	_, err := r.Service()
	assert.ErrorIs(t, err, ErrStarting)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Equal(t, coremetrics.ReasonStarting, err.Error())
	_, err = r.Segments()
	assert.ErrorIs(t, err, ErrSegmentsStarting)
	assert.ErrorIs(t, err, intf.ErrUnavailable)

	close(segsGo)
	require.Eventually(t, func() bool { _, err := r.Segments(); return err == nil }, 10*time.Second, time.Millisecond,
		"segment mode serves while the service starts")
	assert.Equal(t, "starting: "+coremetrics.ReasonStarting, health(r))
	select {
	case <-r.Started():
		t.Fatal("started before the service")
	default:
	}

	close(svcGo)
	require.NoError(t, <-started)
	<-r.Started()
	assert.Equal(t, []string{"segments", "service"}, order)
	assert.Equal(t, "ready", health(r))
	got, err := r.Service()
	require.NoError(t, err)
	assert.Same(t, svc, got)
	st, ok := r.Stats()
	assert.True(t, ok)
	assert.EqualValues(t, 5, st.Machine)

	svc.held.Store(false)
	assert.Equal(t, "fenced: "+coremetrics.ReasonFenced, health(r))
	svc.held.Store(true)
	assert.Equal(t, "ready", health(r))

	r.Drain()
	assert.Equal(t, "stopping: "+coremetrics.ReasonStopping, health(r))
	_, err = r.Service()
	assert.NoError(t, err, "the calls in flight keep their service while draining")
	_, err = r.Segments()
	assert.NoError(t, err)

	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	assert.Equal(t, int32(1), svc.closes.Load())
	assert.Equal(t, int32(1), segs.closes.Load())
	assert.Error(t, r.Start(context.Background()), "no start after Close")
}

// Without segment mode Segments says off, until the drain, which wins.
func TestSegmentsOff(t *testing.T) {
	r := New(Options{Logger: quiet(), Start: func(context.Context) (Service, error) { return newFakeService(), nil }})
	_, err := r.Segments()
	assert.ErrorIs(t, err, ErrSegmentsStarting, "before Start")
	require.NoError(t, r.Start(context.Background()))
	_, err = r.Segments()
	assert.ErrorIs(t, err, ErrSegmentsOff)
	assert.Equal(t, "ready", health(r))
	_, state := r.Page(statuspage.Options{}).Segments()
	assert.Equal(t, statuspage.SegmentsOff, state)
	assert.Nil(t, r.Metrics(coremetrics.Source{}).Segments())
	r.Drain()
	_, err = r.Segments()
	assert.ErrorIs(t, err, ErrStopping)
	assert.ErrorIs(t, err, intf.ErrClosed)
	require.NoError(t, r.Close())
}

// A segment store unreachable at start costs the segment calls, not the
// Vesta IDs: the runtime starts and is ready, Segments answers "segment
// store unavailable" (the reason, which names the database's address, in
// the log only), the store is retried with back-off, and once it opens
// it serves. On the fake clock of synctest.
func TestSegmentStoreUnreachableAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		var attempts atomic.Int32
		var up atomic.Bool
		segs := &fakeSegments{}
		r := New(Options{Logger: slog.New(slog.NewTextHandler(&log, nil)), SegmentAnswer: "/segment: 503",
			SegmentRetryMin: time.Second, SegmentRetryMax: 4 * time.Second,
			OpenSegments: func(context.Context) (Segments, error) {
				attempts.Add(1)
				if !up.Load() {
					return nil, fmt.Errorf("dial tcp 10.1.2.3:5432: connection refused: %w", intf.ErrUnavailable)
				}
				return segs, nil
			},
			Start: func(context.Context) (Service, error) { return newFakeService(), nil },
		})
		require.NoError(t, r.Start(context.Background()))
		assert.Equal(t, "ready", health(r), "readiness is about the Vesta IDs")
		_, err := r.Segments()
		var se *segopen.StoreError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "segment store unavailable: retry shortly", err.Error())
		assert.ErrorIs(t, err, intf.ErrUnavailable)
		assert.Contains(t, log.String(), "10.1.2.3:5432", "the log keeps the reason")
		assert.Contains(t, log.String(), "/segment: 503")
		_, state := r.Page(statuspage.Options{}).Segments()
		assert.Equal(t, statuspage.SegmentsOpening, state)

		time.Sleep(1 * time.Second) // first retry after 1 s, then 2 s, 4 s, 4 s
		synctest.Wait()
		assert.Equal(t, int32(2), attempts.Load())
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, int32(3), attempts.Load())
		up.Store(true)
		time.Sleep(4 * time.Second)
		synctest.Wait()
		assert.Equal(t, int32(4), attempts.Load())
		_, err = r.Segments()
		require.NoError(t, err)
		assert.NotNil(t, r.Metrics(coremetrics.Source{}).Segments())
		require.NoError(t, r.Close())
		assert.Equal(t, int32(1), segs.closes.Load())
	})
}

// Close ends the retries of a store that never opens (a retry left
// running would leave synctest's bubble blocked).
func TestCloseStopsSegmentRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts atomic.Int32
		r := New(Options{Logger: quiet(), SegmentRetryMin: time.Millisecond, SegmentRetryMax: time.Millisecond,
			OpenSegments: func(context.Context) (Segments, error) {
				attempts.Add(1)
				return nil, fmt.Errorf("no answer: %w", intf.ErrUnavailable)
			},
			Start: func(context.Context) (Service, error) { return newFakeService(), nil },
		})
		require.NoError(t, r.Start(context.Background()))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		assert.GreaterOrEqual(t, attempts.Load(), int32(2))
		require.NoError(t, r.Close())
	})
}

// Only unreachability is retried: another error of segment mode fails
// the start, before the ID service is constructed.
func TestSegmentPermanentErrorFailsStart(t *testing.T) {
	boom := errors.New("password authentication failed")
	var attempts, starts atomic.Int32
	r := New(Options{Logger: quiet(), SegmentRetryMin: time.Millisecond,
		OpenSegments: func(context.Context) (Segments, error) { attempts.Add(1); return nil, boom },
		Start:        func(context.Context) (Service, error) { starts.Add(1); return newFakeService(), nil },
	})
	require.ErrorIs(t, r.Start(context.Background()), boom)
	require.NoError(t, r.Close())
	assert.Equal(t, int32(1), attempts.Load())
	assert.Equal(t, int32(0), starts.Load())
}

// A service that fails to start fails Start; segment mode, open, is
// closed by Close.
func TestServiceStartFailure(t *testing.T) {
	boom := errors.New("clock far behind")
	segs := &fakeSegments{}
	r := New(Options{Logger: quiet(),
		OpenSegments: func(context.Context) (Segments, error) { return segs, nil },
		Start:        func(context.Context) (Service, error) { return nil, boom },
	})
	require.ErrorIs(t, r.Start(context.Background()), boom)
	assert.Equal(t, "starting: "+coremetrics.ReasonStarting, health(r))
	require.NoError(t, r.Close())
	assert.Equal(t, int32(1), segs.closes.Load())
	assert.Equal(t, "stopping: "+coremetrics.ReasonStopping, health(r))
}

// A Close while the service starts wins: the service, once constructed,
// is closed at once and never served.
func TestCloseWhileStarting(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	svc := newFakeService()
	r := New(Options{Logger: quiet(), Start: func(context.Context) (Service, error) {
		close(entered)
		<-release
		return svc, nil
	}})
	started := make(chan error, 1)
	go func() { started <- r.Start(context.Background()) }()
	<-entered
	require.NoError(t, r.Close())
	close(release)
	require.ErrorIs(t, <-started, intf.ErrClosed)
	assert.Equal(t, int32(1), svc.closes.Load())
	_, err := r.Service()
	assert.ErrorIs(t, err, ErrStopping)
}

func TestStartTwice(t *testing.T) {
	r := New(Options{Logger: quiet(), Start: func(context.Context) (Service, error) { return newFakeService(), nil }})
	require.NoError(t, r.Start(context.Background()))
	assert.Error(t, r.Start(context.Background()))
	require.NoError(t, r.Close())
	assert.Error(t, New(Options{Logger: quiet()}).Start(context.Background()), "Options.Start is required")
}

// The open segment mode's calls answer a store's failure as "segment
// store unavailable", the detail in the log; a caller's own error (an
// unknown tag) stays as it is.
func TestSegmentCallErrors(t *testing.T) {
	var log bytes.Buffer
	segs := &fakeSegments{err: fmt.Errorf("allocating: 10.1.2.3:5432: connection refused: %w", intf.ErrUnavailable)}
	r := New(Options{Logger: slog.New(slog.NewTextHandler(&log, nil)),
		OpenSegments: func(context.Context) (Segments, error) { return segs, nil },
		Start:        func(context.Context) (Service, error) { return newFakeService(), nil },
	})
	require.NoError(t, r.Start(context.Background()))
	defer func() { require.NoError(t, r.Close()) }()
	seg, err := r.Segments()
	require.NoError(t, err)
	_, err = seg.NextIds(context.Background(), "order", 2)
	assert.Equal(t, "segment store unavailable: retry shortly", err.Error())
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	_, err = seg.Step(context.Background(), "order")
	assert.ErrorIs(t, err, segopen.ErrStoreUnavailable)
	assert.Contains(t, log.String(), "10.1.2.3:5432")

	segs.err = &intf.TagError{Tag: "nope", Reason: "unknown"}
	_, err = seg.NextIds(context.Background(), "nope", 1)
	var te *intf.TagError
	assert.ErrorAs(t, err, &te)
}

// Metrics and Page report the runtime as it is.
func TestMetricsAndPage(t *testing.T) {
	segs, svc := &fakeSegments{}, newFakeService()
	r := New(Options{Logger: quiet(),
		OpenSegments: func(context.Context) (Segments, error) { return segs, nil },
		Start:        func(context.Context) (Service, error) { return svc, nil },
	})
	src := r.Metrics(coremetrics.Source{Type: intf.MaxPeak})
	page := r.Page(statuspage.Options{Server: "test"})
	assert.Equal(t, intf.MaxPeak, src.Type)
	assert.Equal(t, "test", page.Server)
	assert.False(t, src.Ready())
	_, ok := src.Stats()
	assert.False(t, ok)
	assert.Nil(t, page.Service())
	assert.Nil(t, src.Segments())

	require.NoError(t, r.Start(context.Background()))
	assert.True(t, src.Ready())
	assert.NotNil(t, page.Service())
	got, state := page.Segments()
	assert.Equal(t, statuspage.SegmentsOpen, state)
	assert.Equal(t, []string{"order"}, got.Tags())
	assert.NotNil(t, src.Segments())
	r.Drain()
	assert.False(t, src.Ready(), "stopping is not ready")
	require.NoError(t, r.Close())
}

// Run starts the runtime, then the door; at the end the runtime says
// stopping before the door drains, and closes once the door has drained.
func TestRun(t *testing.T) {
	svc := newFakeService()
	r := New(Options{Logger: quiet(), ShutdownTimeout: time.Second,
		Start: func(context.Context) (Service, error) { return svc, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var events []string
	err := r.Run(ctx, Door{Name: "test",
		Serve: func() error { <-stopped; return nil },
		Start: func(context.Context) error {
			_, err := r.Service()
			events = append(events, fmt.Sprintf("door start: service err=%v", err))
			return nil
		},
		Ready: func() { events = append(events, "ready: "+health(r)); cancel() },
		Drain: func(context.Context) error {
			events = append(events, "drain: "+r.Health().Status+fmt.Sprintf(", closes=%d", svc.closes.Load()))
			close(stopped)
			return nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"door start: service err=<nil>", "ready: ready", "drain: stopping, closes=0"}, events)
	assert.Equal(t, int32(1), svc.closes.Load())
}

// A door's start failing fails the run, and the runtime is closed; a
// door that serves must drain.
func TestRunDoorStartFails(t *testing.T) {
	svc := newFakeService()
	r := New(Options{Logger: quiet(), Start: func(context.Context) (Service, error) { return svc, nil }})
	boom := errors.New("listen: address in use")
	err := r.Run(context.Background(), Door{Name: "test", Start: func(context.Context) error { return boom }})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, int32(1), svc.closes.Load())

	err = New(Options{}).Run(context.Background(), Door{Name: "test", Serve: func() error { return nil }})
	assert.ErrorContains(t, err, "Drain with Serve")
}
