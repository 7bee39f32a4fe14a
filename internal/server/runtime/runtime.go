// Package runtime is the one runtime of a server run, behind both doors:
// it owns the ID service once started, segment mode (opened through
// internal/server/segopen: off, open, or its store retried in the
// background while the segment calls answer unavailable), readiness (what
// /readyz, vesta_ready and the status page say: starting, fenced, ready,
// stopping), the drain and the close, and the one run of a server (Run:
// serve, start, ready, drain within the shutdown timeout, close the
// service, then segment mode). REST (server-rest's restserver) and RPC
// (server-rpc's rpcapp, its plugin mode and its admin listener) are thin
// adapters over it: each asks the runtime what to serve (Service,
// Segments) and answers its sentinel errors in its own protocol, and
// reports its readiness (Health, Metrics, Page) as it is.
package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/segopen"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Service is what the doors serve of the ID service; *service.Service
// implements it.
type Service interface {
	intf.IdService
	// Stats is read when /metrics is scraped and by the readiness;
	// Stats and Settings when /status is read.
	Stats() service.Stats
	Settings() service.Settings
	// Close stores the time high-water mark; the runtime calls it once
	// serving is over.
	Close() error
}

// StartFunc constructs the ID service. It may block (service.New waits for
// the clock to pass the high-water mark) and must return when ctx ends.
type StartFunc func(ctx context.Context) (Service, error)

// Segments is what the doors serve of segment mode; *segment.Generator
// implements it.
type Segments interface {
	intf.SegmentService
	// NextId is NextIds for one ID, without allocating.
	NextId(ctx context.Context, tag string) (int64, error)
	// NextRange hands out a range of the tag whole; Step is the tag's
	// step, which caps a quota's range.
	NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error)
	Step(ctx context.Context, tag string) (int64, error)
	// NextNumber serves the period tags.
	NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error)
	// Tags and Status are read by the status page and when /metrics is
	// scraped.
	Tags() []string
	Status(tag string) (segbuf.Status, error)
	// Close releases the store; the runtime calls it once serving is
	// over.
	Close() error
}

// OpenSegmentsFunc opens segment mode. A nil Segments with a nil error
// means segment mode is off. An error matching intf.ErrUnavailable says
// the store cannot be reached now: it is retried in the background; any
// other error fails the start. It must return when ctx ends.
type OpenSegmentsFunc func(ctx context.Context) (Segments, error)

// Options configure a Runtime; zero fields take the defaults.
type Options struct {
	// Start constructs the ID service (required).
	Start StartFunc
	// OpenSegments opens segment mode; nil means it is off.
	OpenSegments OpenSegmentsFunc
	// SegmentRetryMin and SegmentRetryMax are the back-off of a segment
	// store unreachable at start: first after min, doubling up to max
	// (zero: segopen.DefaultRetryMin and DefaultRetryMax, 1s and 30s).
	SegmentRetryMin, SegmentRetryMax time.Duration
	// SegmentAnswer is what the door's segment calls answer while the
	// store is retried, for the warning that says so ("/segment: 503").
	SegmentAnswer string
	// ShutdownTimeout bounds the door's drain in Run (<= 0: the servers'
	// default, serverdefaults.ShutdownTimeout).
	ShutdownTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Why the runtime has nothing to serve: each door answers these in its
// protocol (REST: 503, or 404 for ErrSegmentsOff; RPC: the codes of
// intf.ErrUnavailable and intf.ErrClosed). A segment store being retried
// is answered with a *segopen.StoreError ("segment store unavailable").
var (
	// ErrStarting: the ID service is not constructed yet. It matches
	// intf.ErrUnavailable.
	ErrStarting error = &stateError{coremetrics.ReasonStarting, intf.ErrUnavailable}
	// ErrStopping: the server is shutting down. It matches intf.ErrClosed.
	ErrStopping error = &stateError{coremetrics.ReasonStopping, intf.ErrClosed}
	// ErrSegmentsStarting: the first attempt at opening segment mode has
	// not ended. It matches intf.ErrUnavailable.
	ErrSegmentsStarting error = &stateError{"segment mode is starting (opening the segment store): retry shortly", intf.ErrUnavailable}
	// ErrSegmentsOff: segment mode is off by configuration.
	ErrSegmentsOff = segopen.ErrOff
)

// stateError is a state of the runtime, worded for a caller, matching
// the contract's error it stands for.
type stateError struct {
	msg string
	is  error
}

func (e *stateError) Error() string { return e.msg }
func (e *stateError) Unwrap() error { return e.is }

// Runtime is one server run's ID service, segment mode and readiness.
// Build it with New (no I/O), start it with Start (or Run), and close it
// with Close (Run does). Its methods are safe for concurrent use.
type Runtime struct {
	start           StartFunc
	segs            *segopen.Mode[Segments]
	log             *slog.Logger
	shutdownTimeout time.Duration

	svc      atomic.Pointer[serviceRef] // nil until Start succeeds
	draining atomic.Bool                // set when the drain begins
	started  chan struct{}              // closed when Start succeeds

	mu      sync.Mutex // orders Start's hand-over against Close
	running bool       // Start was called
	closed  bool
}

// serviceRef boxes the interface for atomic.Pointer.
type serviceRef struct{ Service }

// New returns the runtime of o. It does no I/O: Start does.
func New(o Options) *Runtime {
	r := &Runtime{start: o.Start, log: cmp.Or(o.Logger, slog.Default()), shutdownTimeout: o.ShutdownTimeout,
		started: make(chan struct{})}
	open := segopen.OpenFunc[Segments](o.OpenSegments)
	if open == nil {
		open = func(context.Context) (Segments, error) { return nil, nil } // off
	}
	r.segs = segopen.New(r.withCallerErrors(open), segopen.Options{RetryMin: o.SegmentRetryMin,
		RetryMax: o.SegmentRetryMax, Logger: r.log, Answer: o.SegmentAnswer})
	return r
}

// Start opens segment mode, then constructs the ID service, making each
// one available (Segments, Service) as soon as it is there: the segment
// calls serve while the ID service may still wait for the clock. It
// blocks while the service waits; cancel ctx to give up. Either failing
// fails Start, but for a segment store that cannot be reached (an
// OpenSegmentsFunc error matching intf.ErrUnavailable): Start then goes
// on to the ID service, and segment mode is retried in the background
// until it opens or Close. Close releases what Start opened, even when
// Start failed.
func (r *Runtime) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.running || r.closed {
		r.mu.Unlock()
		return errors.New("runtime: Start called twice or after Close")
	}
	r.running = true
	r.mu.Unlock()

	if err := r.segs.Start(ctx); err != nil {
		return err
	}
	if r.start == nil {
		return errors.New("runtime: Options.Start is required")
	}
	svc, err := r.start(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed { // Close won the race: the service must not outlive it
		return errors.Join(intf.ErrClosed, svc.Close())
	}
	r.svc.Store(&serviceRef{svc})
	close(r.started)
	return nil
}

// Started is closed once Start has constructed the ID service (segment
// mode being open, off, or retried in the background).
func (r *Runtime) Started() <-chan struct{} { return r.started }

// Service returns the ID service once started, or why there is none yet:
// ErrStarting, or ErrStopping once the drain began. A service closed by
// Close is still returned: its calls answer intf.ErrClosed.
func (r *Runtime) Service() (Service, error) {
	if ref := r.svc.Load(); ref != nil {
		return ref.Service, nil
	}
	if r.draining.Load() {
		return nil, ErrStopping
	}
	return nil, ErrStarting
}

// Segments returns segment mode when it is open, or why it is not:
// ErrStopping once the drain began, ErrSegmentsOff, a *segopen.StoreError
// while its store is retried (the reason stays in the log), or
// ErrSegmentsStarting. The open segment mode's calls answer a store's
// failure as a *segopen.StoreError too ("segment store unavailable":
// segopen.Mode.CallerError), so that no caller reads the database's
// address.
func (r *Runtime) Segments() (Segments, error) {
	seg, err := r.segs.Get()
	var down *segopen.DownError
	switch {
	case err == nil:
		return seg, nil
	case r.draining.Load():
		return nil, ErrStopping
	case errors.Is(err, segopen.ErrOff):
		return nil, ErrSegmentsOff
	case errors.As(err, &down):
		return nil, r.segs.CallerError(err)
	}
	return nil, ErrSegmentsStarting
}

// Drain begins the drain: from now on the readiness says stopping, and a
// service or segment mode not there yet is ErrStopping. The door then
// stops accepting and finishes its calls (Run calls Drain, then the
// door's). Later calls do nothing.
func (r *Runtime) Drain() { r.draining.Store(true) }

// Close drains (Drain), stops retrying segment mode, closes the ID
// service, which stores the exact time high-water mark, then closes
// segment mode. Nothing is published after it. Later calls return nil.
func (r *Runtime) Close() error {
	r.Drain()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true // from here nothing is published (Start, the retries)
	r.mu.Unlock()
	var err error
	if ref := r.svc.Load(); ref != nil {
		if cerr := ref.Close(); cerr != nil {
			err = fmt.Errorf("closing the id service: %w", cerr)
		}
	}
	// Ends the retries (nothing is published once it began), then closes
	// segment mode.
	return errors.Join(err, r.segs.Close())
}
