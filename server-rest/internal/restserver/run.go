package restserver

import (
	"context"
	"fmt"
	"net"

	"github.com/vesta-go/vesta/internal/server/runtime"
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
// A cancelled ctx is a clean exit: Serve returns nil. It is the runtime's
// run (internal/server/runtime) with its HTTP serving as the door, for server-rest
// and for a program that embeds the server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	h := s.serving(ln)
	return s.rt.Run(ctx, runtime.Door{Name: "rest", Serve: h.Serve, Ready: h.Ready, Drain: h.Drain})
}
