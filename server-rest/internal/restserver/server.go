package restserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
)

// Service is what the server needs of the ID service (runtime.Service);
// *service.Service implements it.
type Service = runtime.Service

// StartFunc constructs the ID service (runtime.StartFunc). It may block
// (service.New waits for the clock to pass the high-water mark) and must
// return when ctx ends.
type StartFunc = runtime.StartFunc

// Segments is what the server needs of segment mode (runtime.Segments);
// *segment.Generator implements it.
type Segments = runtime.Segments

// OpenSegmentsFunc opens segment mode (runtime.OpenSegmentsFunc). A nil
// Segments with a nil error means segment mode is off: /segment then
// answers 404.
type OpenSegmentsFunc = runtime.OpenSegmentsFunc

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

// Option changes a Server built by New.
type Option func(*Server)

// WithSegments serves segment mode, opened by f when the server starts.
// Without it /segment answers 404.
func WithSegments(f OpenSegmentsFunc) Option { return func(s *Server) { s.rto.OpenSegments = f } }

// WithShutdownTimeout sets how long Serve waits for in-flight requests
// (default DefaultShutdownTimeout); d <= 0 means the default.
func WithShutdownTimeout(d time.Duration) Option {
	return func(s *Server) { s.rto.ShutdownTimeout = d }
}

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
// (defaults 1s and 30s: the runtime's, internal/server/segopen's
// DefaultRetryMin and DefaultRetryMax).
func WithSegmentRetry(min, max time.Duration) Option {
	return func(s *Server) { s.rto.SegmentRetryMin, s.rto.SegmentRetryMax = min, max }
}

// WithMaxBatch caps ?count of /genid and /segment/{tag} (the configuration's
// maxBatch; default DefaultMaxBatch); above intf.MaxBatch it means
// intf.MaxBatch, below 1 the default.
func WithMaxBatch(n int) Option { return func(s *Server) { s.maxBatch = n } }

// WithMaxRange caps ?size of /segment/{tag}/range (the configuration's
// segmentMaxRange); outside 1..intf.MaxRange it means serverdefaults.SegmentMaxRange.
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
	rto             runtime.Options // the options of rt, set by New's options
	rt              *runtime.Runtime
	callTimeout     time.Duration
	errCallTimeout  *apiError // the answer of a call that reached callTimeout
	maxConnsPerIP   int
	maxConns        int
	maxBatch        int
	maxRange        int64
	idType          intf.IdType
	countWant       string // what ?count allows, for error messages
	machineProvider string // WithMachineSource, for /status
	machineSource   string
	ops             http.Handler // the operations surface (statuspage.go)
	opsErr          error        // building it failed: its endpoints answer 500
	echo            *echo.Echo
	static          staticRoutes // serveHTTP
	handler         http.Handler // echo with the access log
	metrics         *metrics
	guard           *access.Guard   // nil: no checks (WithGuard)
	certs           *tlsserve.Certs // nil: plain HTTP (WithTLS)

	tlsLn atomic.Pointer[tlsserve.Listener] // set by Serve with TLS, for the metrics
}

// New builds a server that serves the ID service start constructs. It
// does no I/O: Start (or Serve, Run) calls start.
func New(start StartFunc, opts ...Option) *Server {
	s := &Server{
		rto:           runtime.Options{Start: withServiceError(start), ShutdownTimeout: DefaultShutdownTimeout},
		callTimeout:   DefaultCallTimeout,
		maxConnsPerIP: DefaultMaxConnsPerIP,
		maxConns:      DefaultMaxConns,
	}
	for _, o := range opts {
		o(s)
	}
	if s.rto.ShutdownTimeout <= 0 {
		s.rto.ShutdownTimeout = DefaultShutdownTimeout
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
	s.rto.Logger, s.rto.SegmentAnswer = s.log, "/segment: 503"
	s.rt = runtime.New(s.rto)
	switch {
	case s.maxBatch < 1:
		s.maxBatch = DefaultMaxBatch
	case s.maxBatch > intf.MaxBatch:
		s.maxBatch = intf.MaxBatch
	}
	if _, err := s.idType.Layout(); err != nil {
		s.idType = intf.MaxPeak
	}
	s.countWant = "an integer 1.." + strconv.Itoa(s.maxBatch) + " (maxBatch)"
	if s.maxRange < 1 || s.maxRange > intf.MaxRange {
		s.maxRange = serverdefaults.SegmentMaxRange
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

// Ready is closed once the ID service is constructed (segment mode being
// open, off, or retried in the background).
func (s *Server) Ready() <-chan struct{} { return s.rt.Started() }

// Start opens segment mode, then constructs the ID service, making each
// one's endpoints available as soon as it is there (runtime.Runtime.Start).
// It blocks while the service waits for the clock; cancel ctx to give up.
// Either failing fails Start, but for a segment store that cannot be
// reached (an OpenSegmentsFunc error matching intf.ErrUnavailable): Start
// then goes on to the ID service, and segment mode is retried in the
// background until it opens or Close (/segment answers 503 meanwhile).
// Close releases what Start opened. Serve calls it; call it yourself only
// when serving Handler another way.
func (s *Server) Start(ctx context.Context) error { return s.rt.Start(ctx) }

// withServiceError names the ID service in the error of start.
func withServiceError(start StartFunc) StartFunc {
	if start == nil {
		return nil
	}
	return func(ctx context.Context) (Service, error) {
		svc, err := start(ctx)
		if err != nil {
			return nil, fmt.Errorf("id service: %w", err)
		}
		return svc, nil
	}
}

// service returns the ID service, or a 503 error while it is starting or
// the server stopping (runtime.ErrStarting, runtime.ErrStopping: classify
// answers them).
func (s *Server) service() (Service, error) { return s.rt.Service() }

// segments returns segment mode, or the error to answer while it is off
// (404), opening, being retried or stopping (503).
func (s *Server) segments() (Segments, error) {
	seg, err := s.rt.Segments()
	if errors.Is(err, runtime.ErrSegmentsOff) {
		return nil, errSegmentsOff
	}
	return seg, err
}

// Close marks the server as stopping (/readyz answers 503), stops
// retrying segment mode, closes the ID service, which stores the exact
// time high-water mark, and closes segment mode (runtime.Runtime.Close).
// Serve calls it after the last in-flight request has finished. Later
// calls return nil.
func (s *Server) Close() error { return s.rt.Close() }
