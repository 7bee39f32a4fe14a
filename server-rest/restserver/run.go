package restserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// HTTP server limits: a slow or oversized client cannot hold a connection
// or memory for long. Headers beyond maxHeaderBytes (net/http reads at
// most 4 KB more) are answered 431, as JSON (plainToJSON).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second // a 100,000-ID batch is ~2 MB
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 16 << 10
)

// Run listens on addr and serves until ctx is cancelled (SIGINT/SIGTERM in
// server-rest), then shuts down gracefully.
func (s *Server) Run(ctx context.Context, addr string) error {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTP on ln at once and constructs the ID service in the
// background. When ctx is cancelled, or the service cannot be constructed,
// it shuts down: /readyz turns 503, the listener closes, in-flight requests
// finish (for up to the shutdown timeout), then the ID service is closed.
// A cancelled ctx is a clean exit: Serve returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.httpServer()
	addr := ln.Addr().String()
	// /healthz and /readyz answer at once; "listening" is logged once the ID
	// service is ready too, after its own "id service ready", so that the
	// line an operator waits for means the IDs are served.
	s.log.Debug("rest: accepting connections; the ID endpoints answer 503 until the id service is ready", "addr", addr)
	ln, limiter := s.newLimitListener(s.tlsListener(ln))
	hs.ConnState = limiter.ConnState

	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	startErr := make(chan error, 1)
	go func() { startErr <- s.Start(startCtx) }()

	var runErr error
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case err := <-serveErr:
			serveErr, running = nil, false
			runErr = fmt.Errorf("http server: %w", err)
		case err := <-startErr:
			startErr = nil
			if err != nil {
				runErr, running = err, false
			} else {
				s.log.Info("vesta: listening", "server", "rest", "addr", addr, "tls", s.certs != nil, "maxConns", s.maxConns, "maxConnsPerIP", s.maxConnsPerIP, "callTimeout", s.callTimeout)
			}
		}
	}

	s.draining.Store(true)
	s.log.Info("vesta: shutting down: finishing the calls in flight", "server", "rest", "timeout", s.shutdownTimeout)
	cancelStart()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("http shutdown: %w", err), hs.Close())
	}
	if serveErr != nil {
		if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
			runErr = errors.Join(runErr, fmt.Errorf("http server: %w", err))
		}
	}
	if startErr != nil {
		// Cancelled while the service was starting: not a failure.
		if err := <-startErr; err != nil && ctx.Err() == nil {
			runErr = errors.Join(runErr, err)
		}
	}
	runErr = errors.Join(runErr, s.Close())
	if runErr == nil {
		s.log.Info("vesta: stopped", "server", "rest")
	}
	return runErr
}

func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}
