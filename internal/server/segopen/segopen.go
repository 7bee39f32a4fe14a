// Package segopen opens segment mode for a server, so that a segment
// store that cannot be reached at start costs the segment calls, not the
// Vesta IDs: the server starts, its segment calls answer "unavailable"
// naming the reason, and the store is retried in the background — after
// 1 s, then after twice the wait before, at most 30 s apart — until it
// opens or the server closes. Any other error (a wrong password, a schema
// problem) is returned by Start, for the operator to fix. server-rest
// (restserver) and server-rpc (its internal/rpcapp) both use it, so that the
// two behave, log and back off alike.
package segopen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/lograte"
	"github.com/vesta-go/vesta/intf"
)

// The back-off of reopening a segment store that could not be reached at
// start: the first retry after DefaultRetryMin, each next one after twice
// the wait before, at most DefaultRetryMax.
const (
	DefaultRetryMin = time.Second
	DefaultRetryMax = 30 * time.Second
)

// Store is what segopen needs of open segment mode: closing it. Its zero
// value (a nil pointer or interface) stands for segment mode off.
type Store interface {
	comparable
	Close() error
}

// OpenFunc opens segment mode: the zero S and a nil error mean it is off.
// An error matching intf.ErrUnavailable says the store cannot be reached
// now and is retried; any other error stops the start. It must return
// when ctx ends.
type OpenFunc[S Store] func(ctx context.Context) (S, error)

// Options configure a Mode; zero fields take the defaults.
type Options struct {
	// RetryMin and RetryMax are the back-off (DefaultRetryMin,
	// DefaultRetryMax); RetryMax below RetryMin means RetryMin.
	RetryMin, RetryMax time.Duration
	// Logger receives the warning of a store unreachable at start and of
	// each change in why it does not open; nil means slog.Default().
	Logger *slog.Logger
	// Answer is what a segment call answers meanwhile, for that warning,
	// e.g. "/segment: 503".
	Answer string
}

// Mode is the segment mode of one server run: starting (before Start),
// open, off, or down — its store being retried in the background. Its
// methods are safe for concurrent use.
type Mode[S Store] struct {
	open     OpenFunc[S]
	log      *slog.Logger
	answer   string
	min, max time.Duration

	cur  atomic.Pointer[box[S]] // nil until open
	off  atomic.Bool
	down atomic.Pointer[DownError] // why the store is not open, while retrying

	storeLog lograte.Limiter // spaces CallerError's warnings

	mu      sync.Mutex // orders publication against Close
	started bool
	closed  bool
	stop    context.CancelFunc // ends the retries
	retries sync.WaitGroup
}

type box[S any] struct{ s S }

// New returns the segment mode open opens. It does no I/O: Start does.
func New[S Store](open OpenFunc[S], o Options) *Mode[S] {
	m := &Mode[S]{open: open, log: o.Logger, answer: o.Answer, min: o.RetryMin, max: o.RetryMax}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.min <= 0 {
		m.min = DefaultRetryMin
	}
	if o.RetryMax == 0 {
		m.max = max(DefaultRetryMax, m.min)
	}
	m.max = max(m.max, m.min)
	return m
}

// Start makes the first attempt at opening segment mode. Open or off, it
// is published at once; a store that cannot be reached (an error matching
// intf.ErrUnavailable, while ctx is not done) is no error: Start logs a
// warning, starts the retries and returns nil. Any other error is
// returned. Start may be called once, and not after Close
// (intf.ErrClosed).
func (m *Mode[S]) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started || m.closed {
		m.mu.Unlock()
		return fmt.Errorf("segment mode: started twice or after close: %w", intf.ErrClosed)
	}
	m.started = true
	m.mu.Unlock()

	s, err := m.open(ctx)
	if err == nil {
		return m.publish(s)
	}
	if !errors.Is(err, intf.ErrUnavailable) || ctx.Err() != nil {
		return err // the opener names segment mode (internal/server/app does)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return intf.ErrClosed
	}
	m.setDown(err, true)
	bg, stop := context.WithCancel(context.Background())
	m.stop = stop
	m.retries.Add(1) // under mu, before Close can Wait
	go m.retry(bg)
	return nil
}

// retry opens segment mode until it opens or Close: after min, then after
// twice the wait before, up to max.
func (m *Mode[S]) retry(ctx context.Context) {
	defer m.retries.Done()
	var zero S
	wait := m.min
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, m.max)
		s, err := m.open(ctx)
		if ctx.Err() != nil {
			if err == nil && s != zero {
				_ = s.Close() // opened as Close began: nothing may use it
			}
			return
		}
		if err == nil {
			if m.publish(s) == nil {
				m.down.Store(nil) // the opener logged it: "vesta: segment mode on"
			}
			return
		}
		m.setDown(err, false)
	}
}

// publish makes s (the zero S: off) available, unless Close came first,
// which then closes it.
func (m *Mode[S]) publish(s S) error {
	var zero S
	if s == zero {
		m.off.Store(true)
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.Join(intf.ErrClosed, s.Close())
	}
	m.cur.Store(&box[S]{s})
	return nil
}

// setDown records why segment mode is not open, for the segment calls'
// answer, and logs it: a warning at start and when the kind of failure
// changes (unreachable, or failing otherwise, e.g. a password refused once
// the database answers), each other failure at debug level only.
func (m *Mode[S]) setDown(err error, first bool) {
	d := &DownError{Err: err}
	prev := m.down.Swap(d)
	switch {
	case first:
		m.log.Warn("vesta: segment store unreachable at start: serving IDs; segment calls answer unavailable ("+m.answer+
			") and the store is retried in the background", "err", err, "firstRetry", m.min, "maxWait", m.max)
	case prev == nil || prev.Unreachable() != d.Unreachable():
		m.log.Warn("vesta: "+d.what()+": still retrying", "err", err)
	default:
		m.log.Debug("vesta: "+d.what()+": still retrying", "err", err)
	}
}

// Open returns segment mode when it is open.
func (m *Mode[S]) Open() (S, bool) {
	if b := m.cur.Load(); b != nil {
		return b.s, true
	}
	var zero S
	return zero, false
}

// Off tells whether segment mode is off (by configuration).
func (m *Mode[S]) Off() bool { return m.off.Load() }

// Down is why the store is not open while it is being retried; nil
// otherwise.
func (m *Mode[S]) Down() *DownError { return m.down.Load() }

// Close stops the retries, waits for them to end and closes segment mode
// if it is open. Nothing is published after it. Later calls return nil.
func (m *Mode[S]) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	stop := m.stop
	m.mu.Unlock()
	if stop != nil {
		stop()
	}
	m.retries.Wait()
	if s, ok := m.Open(); ok {
		if err := s.Close(); err != nil {
			return fmt.Errorf("closing segment mode: %w", err)
		}
	}
	return nil
}

// DownError is why segment mode is not open while its store is retried.
// It matches intf.ErrUnavailable (a client tries another server) and the
// error of the last attempt.
type DownError struct{ Err error }

// Unreachable tells whether the last attempt found the store unreachable,
// as opposed to failing otherwise.
func (e *DownError) Unreachable() bool { return errors.Is(e.Err, intf.ErrUnavailable) }

func (e *DownError) what() string {
	if e.Unreachable() {
		return "segment store unreachable"
	}
	return "segment store failing to open"
}

func (e *DownError) Error() string {
	return e.what() + ": " + e.Err.Error() + " (retrying in the background)"
}

func (e *DownError) Unwrap() []error { return []error{e.Err, intf.ErrUnavailable} }
