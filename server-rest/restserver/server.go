package restserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/app"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/config"
)

// Service is what the server needs of the ID service; *service.Service
// implements it.
type Service interface {
	intf.IdService
	// Stats is read when /metrics is scraped.
	Stats() service.Stats
	// Close stores the time high-water mark; called once serving is over.
	Close() error
}

// StartFunc constructs the ID service. It may block (service.New waits for
// the clock to pass the high-water mark) and must return when ctx ends.
type StartFunc func(ctx context.Context, cfg config.Config) (Service, error)

// StartService is the default StartFunc: app.StartService, which also logs
// what the service runs as and warns about the default machine id 0.
func StartService(ctx context.Context, cfg config.Config) (Service, error) {
	svc, err := app.StartService(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return svc, nil
}

// DefaultShutdownTimeout bounds how long Serve waits for in-flight
// requests once shutdown begins.
const DefaultShutdownTimeout = 15 * time.Second

// Option changes a Server built by New.
type Option func(*Server)

// WithStart replaces the function that constructs the ID service.
func WithStart(f StartFunc) Option { return func(s *Server) { s.startFn = f } }

// WithShutdownTimeout sets how long Serve waits for in-flight requests.
func WithShutdownTimeout(d time.Duration) Option { return func(s *Server) { s.shutdownTimeout = d } }

// Server serves the REST API. Build it with New; it is ready to serve HTTP
// at once, and its ID endpoints answer 503 until Start has constructed the
// ID service (Serve and Run call Start in the background).
type Server struct {
	cfg             config.Config
	log             *slog.Logger
	startFn         StartFunc
	shutdownTimeout time.Duration
	echo            *echo.Echo
	metrics         *metrics

	svc      atomic.Pointer[serviceRef] // nil until Start succeeds
	draining atomic.Bool                // set when shutdown begins
	ready    chan struct{}              // closed when Start succeeds

	mu      sync.Mutex // orders Start's hand-over against Close
	started bool
	closed  bool
}

// serviceRef boxes the interface for atomic.Pointer.
type serviceRef struct{ Service }

// New builds a server for cfg (from service/config). It does no I/O.
func New(cfg config.Config, opts ...Option) *Server {
	s := &Server{
		cfg:             cfg,
		log:             cfg.Service.Logger,
		startFn:         StartService,
		shutdownTimeout: DefaultShutdownTimeout,
		ready:           make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.cfg.MaxBatch <= 0 {
		s.cfg.MaxBatch = config.DefaultMaxBatch
	}
	for _, o := range opts {
		o(s)
	}
	s.metrics = newMetrics(s)
	s.echo = s.newEcho()
	return s
}

// Handler is the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.echo }

// Ready is closed once the ID service is constructed.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Start constructs the ID service and makes the ID endpoints available. It
// blocks while the service waits for the clock; cancel ctx to give up.
// Serve calls it; call it yourself only when serving Handler another way.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("restserver: Start called twice or after Close")
	}
	s.started = true
	s.mu.Unlock()

	svc, err := s.startFn(ctx, s.cfg)
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

// Close marks the server as stopping (/readyz answers 503) and closes the
// ID service, which stores the exact time high-water mark. Serve calls it
// after the last in-flight request has finished. Later calls return nil.
func (s *Server) Close() error {
	s.draining.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if r := s.svc.Load(); r != nil {
		if err := r.Close(); err != nil {
			return fmt.Errorf("closing the id service: %w", err)
		}
	}
	return nil
}
