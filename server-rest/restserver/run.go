package restserver

import (
	"context"
	"errors"
	"fmt"
	"net"
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
// A cancelled ctx is a clean exit: Serve returns nil. It runs the parts of
// Serving, Start and Close in the order server-rest's lifecycle
// (internal/app) runs them, for a program that embeds the server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	h := s.Serving(ln)
	served := make(chan error, 1)
	go func() { served <- h.Serve() }()
	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	started := make(chan error, 1)
	go func() { started <- s.Start(startCtx) }()

	var err error
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case err = <-served:
			served, running = nil, false
		case serr := <-started:
			started = nil
			switch {
			case serr == nil:
				h.Ready()
			case ctx.Err() == nil:
				err, running = serr, false
			default:
				running = false
			}
		}
	}
	cancelStart()
	if started != nil {
		<-started // cancelled while the service was starting: not a failure
	}
	s.log.Info("vesta: shutting down: finishing the calls in flight", "server", "rest", "timeout", s.shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.shutdownTimeout)
	defer cancel()
	err = errors.Join(err, h.Drain(shutdownCtx))
	if served != nil {
		err = errors.Join(err, <-served)
	}
	err = errors.Join(err, s.Close())
	if err == nil {
		s.log.Info("vesta: stopped", "server", "rest")
	}
	return err
}
