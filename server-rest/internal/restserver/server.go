package restserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/server/segopen"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Service is what the server needs of the ID service; *service.Service
// implements it.
type Service interface {
	intf.IdService
	// Stats is read when /metrics is scraped; Stats and Settings when
	// /status is read.
	Stats() service.Stats
	Settings() service.Settings
	// Close stores the time high-water mark; called once serving is over.
	Close() error
}

// StartFunc constructs the ID service. It may block (service.New waits for
// the clock to pass the high-water mark) and must return when ctx ends.
type StartFunc func(ctx context.Context) (Service, error)

// Segments is what the server needs of segment mode; *segment.Generator
// implements it.
type Segments interface {
	intf.SegmentService
	// NextId is NextIds for one ID, without allocating.
	NextId(ctx context.Context, tag string) (int64, error)
	// NextRange hands out a range of the tag whole (/segment/{tag}/range);
	// Step caps a quota's range of the tag's step.
	intf.SegmentRanger
	intf.SegmentStepper
	// NextNumber serves the period tags (/number/{tag}).
	intf.SegmentNumberer
	// Tags and Status are read by GET /segment and when /metrics is scraped.
	Tags() []string
	Status(tag string) (segbuf.Status, error)
	// Close releases the store; called once serving is over.
	Close() error
}

// OpenSegmentsFunc opens segment mode. A nil Segments with a nil error
// means segment mode is off: /segment then answers 404.
type OpenSegmentsFunc func(ctx context.Context) (Segments, error)

// The defaults of the options: the servers' defaults
// (internal/serverdefaults), which server-rest's configuration applies
// too, so that a library user gets the server server-rest runs.
const (
	// DefaultShutdownTimeout bounds how long Serve waits for in-flight
	// requests once shutdown begins (the configuration's shutdownTimeout).
	DefaultShutdownTimeout = serverdefaults.ShutdownTimeout
	// DefaultCallTimeout bounds the service call of one /genid or
	// /segment/{tag} request (the configuration's callTimeout).
	DefaultCallTimeout = serverdefaults.CallTimeout
	// DefaultMaxConnsPerIP caps the connections Serve holds from one
	// remote IP (the configuration's maxConnsPerIP).
	DefaultMaxConnsPerIP = serverdefaults.MaxConnsPerIP
	// DefaultMaxConns caps the connections Serve holds at once (the
	// configuration's maxConns, fitted to the file descriptor limit).
	DefaultMaxConns = serverdefaults.MaxConns
	// DefaultMaxBatch caps ?count of /genid and /segment/{tag} (the
	// configuration's maxBatch).
	DefaultMaxBatch = serverdefaults.MaxBatch
)

// The back-off of reopening a segment store that could not be reached at
// start: the first retry after DefaultSegmentRetryMin, each next one
// after twice the wait before, at most DefaultSegmentRetryMax (package
// internal/server/segopen, which server-rpc uses too).
const (
	DefaultSegmentRetryMin = segopen.DefaultRetryMin
	DefaultSegmentRetryMax = segopen.DefaultRetryMax
)

// Option changes a Server built by New.
type Option func(*Server)

// WithSegments serves segment mode, opened by f when the server starts.
// Without it /segment answers 404.
func WithSegments(f OpenSegmentsFunc) Option { return func(s *Server) { s.openSegmentsFn = f } }

// WithShutdownTimeout sets how long Serve waits for in-flight requests
// (default DefaultShutdownTimeout); d <= 0 means the default.
func WithShutdownTimeout(d time.Duration) Option { return func(s *Server) { s.shutdownTimeout = d } }

// WithCallTimeout bounds the service call of each /genid and
// /segment/{tag} request (default DefaultCallTimeout): a call still
// waiting after d answers 503 with Retry-After, naming the bound. d <= 0
// means no bound but the client's own (its connection closing).
func WithCallTimeout(d time.Duration) Option { return func(s *Server) { s.callTimeout = d } }

// WithMaxConnsPerIP caps the connections Serve holds from one remote IP
// (default DefaultMaxConnsPerIP); one more is closed at accept. n < 1
// means the default.
func WithMaxConnsPerIP(n int) Option { return func(s *Server) { s.maxConnsPerIP = n } }

// WithMaxConns caps the connections Serve holds at once (default
// DefaultMaxConns): a newcomer over it evicts the connection idle the
// longest, or is closed at accept when every one serves a request. n < 1
// means the default.
func WithMaxConns(n int) Option { return func(s *Server) { s.maxConns = n } }

// WithSegmentRetry sets the back-off of reopening a segment store that
// could not be reached at start: first after min, doubling up to max
// (defaults DefaultSegmentRetryMin, DefaultSegmentRetryMax).
func WithSegmentRetry(min, max time.Duration) Option {
	return func(s *Server) { s.retryMin, s.retryMax = min, max }
}

// WithMaxBatch caps ?count of /genid and /segment/{tag} (the configuration's
// maxBatch; default DefaultMaxBatch); above intf.MaxBatch it means
// intf.MaxBatch, below 1 the default.
func WithMaxBatch(n int) Option { return func(s *Server) { s.maxBatch = n } }

// WithMaxRange caps ?size of /segment/{tag}/range (the configuration's
// segmentMaxRange); outside 1..intf.MaxRange it means intf.DefaultMaxRange.
func WithMaxRange(n int64) Option { return func(s *Server) { s.maxRange = n } }

// WithType names the service's ID type, for the ranges /makeid's errors
// quote, /transtime's default type and the metrics' type label (default
// intf.MaxPeak).
func WithType(t intf.IdType) Option { return func(s *Server) { s.idType = t } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// Server serves the REST API. Build it with New; it is ready to serve HTTP
// at once, and its ID endpoints answer 503 until Start has constructed the
// ID service (Serve and Run call Start in the background). Start opens
// segment mode first, so the segment endpoints serve while the ID service
// may still wait for the clock.
type Server struct {
	log             *slog.Logger
	startFn         StartFunc
	openSegmentsFn  OpenSegmentsFunc
	shutdownTimeout time.Duration
	callTimeout     time.Duration
	errCallTimeout  *apiError // the answer of a call that reached callTimeout
	maxConnsPerIP   int
	maxConns        int
	retryMin        time.Duration
	retryMax        time.Duration
	maxBatch        int
	maxRange        int64
	idType          intf.IdType
	countWant       string // what ?count allows, for error messages
	machineProvider string // WithMachineSource, for /status
	machineSource   string
	ops             http.Handler // the operations surface (statuspage.go)
	opsErr          error        // building it failed: its endpoints answer 500
	echo            *echo.Echo
	handler         http.Handler // echo with the access log
	metrics         *metrics
	guard           *access.Guard   // nil: no checks (WithGuard)
	certs           *tlsserve.Certs // nil: plain HTTP (WithTLS)

	tlsLn atomic.Pointer[tlsserve.Listener] // set by Serve with TLS, for the metrics

	svc      atomic.Pointer[serviceRef] // nil until Start succeeds
	segs     *segopen.Mode[Segments]    // segment mode: open, off or being retried
	draining atomic.Bool                // set when shutdown begins
	ready    chan struct{}              // closed when Start succeeds

	mu      sync.Mutex // orders Start's hand-over against Close
	started bool
	closed  bool
}

// serviceRef boxes the interface for atomic.Pointer.
type serviceRef struct{ Service }

// New builds a server that serves the ID service start constructs. It
// does no I/O: Start (or Serve, Run) calls start.
func New(start StartFunc, opts ...Option) *Server {
	s := &Server{
		startFn:         start,
		shutdownTimeout: DefaultShutdownTimeout,
		callTimeout:     DefaultCallTimeout,
		maxConnsPerIP:   DefaultMaxConnsPerIP,
		maxConns:        DefaultMaxConns,
		retryMin:        DefaultSegmentRetryMin,
		retryMax:        DefaultSegmentRetryMax,
		ready:           make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	if s.shutdownTimeout <= 0 {
		s.shutdownTimeout = DefaultShutdownTimeout
	}
	if s.maxConnsPerIP < 1 {
		s.maxConnsPerIP = DefaultMaxConnsPerIP
	}
	if s.maxConns < 1 {
		s.maxConns = DefaultMaxConns
	}
	s.errCallTimeout = callTimeoutError(s.callTimeout)
	if s.log == nil {
		s.log = slog.Default()
	}
	open := segopen.OpenFunc[Segments](s.openSegmentsFn)
	if open == nil {
		open = func(context.Context) (Segments, error) { return nil, nil } // off
	}
	open = s.withCallerErrors(open)
	s.segs = segopen.New(open, segopen.Options{RetryMin: s.retryMin, RetryMax: s.retryMax,
		Logger: s.log, Answer: "/segment: 503"})
	switch {
	case s.maxBatch < 1:
		s.maxBatch = DefaultMaxBatch
	case s.maxBatch > intf.MaxBatch:
		s.maxBatch = intf.MaxBatch
	}
	if !s.idType.Valid() {
		s.idType = intf.MaxPeak
	}
	s.countWant = "an integer 1.." + strconv.Itoa(s.maxBatch) + " (maxBatch)"
	if s.maxRange < 1 || s.maxRange > intf.MaxRange {
		s.maxRange = intf.DefaultMaxRange
	}
	s.metrics = newMetrics(s)
	s.ops, s.opsErr = s.newOps()
	s.echo = s.newEcho()
	s.handler = s.withAccessLog(s.echo)
	return s
}

// Handler is the HTTP handler of every endpoint, with the access log (at
// debug level).
func (s *Server) Handler() http.Handler { return s.handler }

// Ready is closed once the ID service is constructed and segment mode is
// open (or off).
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Start opens segment mode, then constructs the ID service, making each
// one's endpoints available as soon as it is there. It blocks while the
// service waits for the clock; cancel ctx to give up. Either failing fails
// Start, but for a segment store that cannot be reached (an
// OpenSegmentsFunc error matching intf.ErrUnavailable): Start then goes on
// to the ID service, and segment mode is retried in the background until
// it opens or Close (/segment answers 503 meanwhile). Close releases what
// Start opened. Serve calls it; call it yourself only when serving Handler
// another way.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("restserver: Start called twice or after Close")
	}
	s.started = true
	s.mu.Unlock()

	if err := s.segs.Start(ctx); err != nil {
		return err
	}
	if s.startFn == nil {
		return errors.New("restserver: New was given no StartFunc")
	}
	svc, err := s.startFn(ctx)
	if err != nil {
		return fmt.Errorf("id service: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed { // Close won the race: the service must not outlive it
		return errors.Join(intf.ErrClosed, svc.Close())
	}
	s.svc.Store(&serviceRef{svc})
	close(s.ready)
	return nil
}

// service returns the ID service, or a 503 error while it is starting.
func (s *Server) service() (Service, error) {
	if r := s.svc.Load(); r != nil {
		return r.Service, nil
	}
	if s.draining.Load() {
		return nil, errStopping
	}
	return nil, errStarting
}

// segments returns segment mode, or the error to answer while it is off,
// opening or gone (segopen.Mode.Get).
func (s *Server) segments() (Segments, error) {
	seg, err := s.segs.Get()
	var down *segopen.DownError
	switch {
	case err == nil:
		return seg, nil
	case s.draining.Load():
		return nil, errStopping
	case errors.Is(err, segopen.ErrOff):
		return nil, errSegmentsOff
	case errors.As(err, &down):
		ce := s.segs.CallerError(err)
		return nil, &apiError{Status: http.StatusServiceUnavailable, Err: ce, Msg: ce.Error()}
	}
	return nil, errSegmentsStarting
}

// Close marks the server as stopping (/readyz answers 503), stops
// retrying segment mode, closes the ID service, which stores the exact
// time high-water mark, and closes segment mode. Serve calls it after the
// last in-flight request has finished. Later calls return nil.
func (s *Server) Close() error {
	s.draining.Store(true)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true // from here nothing is published (Start, the retries)
	s.mu.Unlock()
	var err error
	if r := s.svc.Load(); r != nil {
		if cerr := r.Close(); cerr != nil {
			err = fmt.Errorf("closing the id service: %w", cerr)
		}
	}
	// Ends the retries (nothing is published once it began), then closes
	// segment mode.
	return errors.Join(err, s.segs.Close())
}
