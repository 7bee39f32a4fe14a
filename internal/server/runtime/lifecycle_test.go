package runtime

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeServer records what the lifecycle did to it.
type fakeServer struct {
	release  chan struct{} // Start returns once closed
	startErr error
	started  atomic.Bool // Start has returned nil
	ready    atomic.Int32
	readyOK  atomic.Bool // Ready saw Start returned
	drain    func(ctx context.Context) error
	stopped  chan struct{} // Drain makes Serve return
	serveErr chan error    // Serve returns what is sent
	closes   atomic.Int32
	log      bytes.Buffer
}

func newFake() *fakeServer {
	f := &fakeServer{release: make(chan struct{}), stopped: make(chan struct{}), serveErr: make(chan error, 1)}
	f.drain = func(context.Context) error { return nil }
	return f
}

func (f *fakeServer) life(timeout time.Duration) lifecycle {
	return lifecycle{
		Name: "test", Logger: slog.New(slog.NewTextHandler(&f.log, nil)), ShutdownTimeout: timeout,
		Serve: func() error {
			select {
			case <-f.stopped:
				return nil
			case err := <-f.serveErr:
				return err
			}
		},
		Start: func(ctx context.Context) error {
			select {
			case <-f.release:
			case <-ctx.Done():
				return ctx.Err()
			}
			if f.startErr == nil {
				f.started.Store(true)
			}
			return f.startErr
		},
		Ready: func() { f.readyOK.Store(f.started.Load()); f.ready.Add(1) },
		Drain: func(ctx context.Context) error {
			defer close(f.stopped)
			return f.drain(ctx)
		},
		Close: func() error { f.closes.Add(1); return nil },
	}
}

// run starts l.run(ctx) and returns its result's channel.
func run(ctx context.Context, l lifecycle) <-chan error {
	done := make(chan error, 1)
	go func() { done <- l.run(ctx) }()
	return done
}

func TestLifecycleReadyOnlyAfterStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		ctx, cancel := context.WithCancel(t.Context())
		done := run(ctx, f.life(time.Second))
		synctest.Wait()
		assert.Zero(t, f.ready.Load(), "not ready while Start blocks")
		close(f.release)
		synctest.Wait()
		assert.Equal(t, int32(1), f.ready.Load())
		assert.True(t, f.readyOK.Load(), "Ready came after Start returned")
		cancel()
		require.NoError(t, <-done)
		assert.Equal(t, int32(1), f.closes.Load())
		assert.Contains(t, f.log.String(), `msg="vesta: stopped" server=test`)
	})
}

func TestLifecycleDrainsWithinTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		var deadline time.Duration
		f.drain = func(ctx context.Context) error {
			d, _ := ctx.Deadline()
			deadline = time.Until(d)
			time.Sleep(deadline / 2) // calls in flight finish in time
			return ctx.Err()
		}
		close(f.release)
		ctx, cancel := context.WithCancel(t.Context())
		done := run(ctx, f.life(7*time.Second))
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)
		assert.Equal(t, 7*time.Second, deadline, "Drain gets shutdownTimeout")
		assert.Equal(t, int32(1), f.closes.Load())
		assert.Contains(t, f.log.String(), `msg="vesta: shutting down: finishing the calls in flight" server=test timeout=7s`)
	})
}

func TestLifecycleTimeoutExceededIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		f.drain = func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() } // a call never ends
		close(f.release)
		ctx, cancel := context.WithCancel(t.Context())
		done := run(ctx, f.life(0)) // the default timeout, on the fake clock
		synctest.Wait()
		cancel()
		err := <-done
		require.ErrorIs(t, err, ErrShutdownIncomplete)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "shutdown incomplete after 15s")
		assert.Equal(t, int32(1), f.closes.Load(), "the service is closed all the same")
		assert.Contains(t, f.log.String(), `msg="vesta: shutdown incomplete: calls still in flight were cut short" server=test timeout=15s`)
		assert.NotContains(t, f.log.String(), "vesta: stopped")
	})
}

func TestLifecycleClosesOnceHoweverItEnds(t *testing.T) {
	boom := errors.New("boom")
	for name, c := range map[string]struct {
		end     func(f *fakeServer, cancel context.CancelFunc)
		wantErr error
	}{
		"start fails":              {end: func(f *fakeServer, _ context.CancelFunc) { f.startErr = boom; close(f.release) }, wantErr: boom},
		"serve fails":              {end: func(f *fakeServer, _ context.CancelFunc) { f.serveErr <- boom }, wantErr: boom},
		"serving ends (host gone)": {end: func(f *fakeServer, _ context.CancelFunc) { f.serveErr <- nil }},
		"cancelled while starting": {end: func(_ *fakeServer, cancel context.CancelFunc) { cancel() }},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake()
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				done := run(ctx, f.life(time.Second))
				synctest.Wait()
				c.end(f, cancel)
				err := <-done
				if c.wantErr != nil {
					require.ErrorIs(t, err, c.wantErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, int32(1), f.closes.Load())
				assert.Zero(t, f.ready.Load())
			})
		})
	}
}

// A Server that could hang (Serve without Drain) or has nothing to run is
// refused before anything starts.
func TestRunRefusesAnIncompleteServer(t *testing.T) {
	start := func(context.Context) error { return nil }
	for _, s := range []lifecycle{
		{Close: func() error { return nil }},
		{Start: start},
		{Start: start, Close: func() error { return nil }, Serve: func() error { return nil }},
	} {
		if err := s.run(context.Background()); err == nil {
			t.Errorf("%+v ran", s)
		}
	}
}
