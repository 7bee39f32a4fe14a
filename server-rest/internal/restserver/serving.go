package restserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/vesta-go/vesta/internal/httptimeout"
)

// HTTP server limits: a slow or oversized client cannot hold a connection
// or memory for long. The timeouts are http.Server's, enforced under TLS
// by httptimeout, which costs a small request a fraction of what
// http.Server's own do. Headers beyond maxHeaderBytes (net/http reads at
// most 4 KB more) are answered 431, as JSON (plainToJSON).
var connTimeouts = httptimeout.Timeouts{
	ReadHeader: 5 * time.Second,
	Read:       10 * time.Second,
	Write:      30 * time.Second, // a 100,000-ID batch is ~2 MB
	Idle:       2 * time.Minute,
}

const maxHeaderBytes = 16 << 10

// serving is the HTTP side of one run of the server on one listener:
// the door Serve runs over the runtime (runtime.Door).
type serving struct {
	s    *Server
	hs   *http.Server
	ln   net.Listener
	addr string
}

// serving prepares serving HTTP on ln, with the server's TLS and
// connection caps. It does no I/O: Serve does.
func (s *Server) serving(ln net.Listener) *serving {
	hs := s.httpServer()
	addr := ln.Addr().String()
	ln, limiter := s.newLimitListener(s.tlsListener(connTimeouts.Listener(ln)))
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		if jc, ok := c.(*jsonConn); ok && jc.connState(st) {
			return
		}
		limiter.ConnState(c, st)
		httptimeout.ConnState(c, st)
	}
	return &serving{s: s, hs: hs, ln: ln, addr: addr}
}

// Serve serves HTTP until Drain, and returns nil then; any other end is
// its error. /healthz and /readyz answer at once; the ID endpoints answer
// 503 until Start has constructed the ID service.
func (h *serving) Serve() error {
	h.s.log.Debug("rest: accepting connections; the ID endpoints answer 503 until the id service is ready", "addr", h.addr)
	if err := h.hs.Serve(h.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}

// Ready logs "vesta: listening", once the ID service is ready, after its
// own "id service ready", so that the line an operator waits for means the
// IDs are served.
func (h *serving) Ready() {
	s := h.s
	s.log.Info("vesta: listening", "server", "rest", "addr", h.addr, "tls", s.certs != nil, "maxConns", s.maxConns,
		"maxConnsPerIP", s.maxConnsPerIP, "callTimeout", s.callTimeout)
}

// Drain, once the runtime says stopping (/readyz answers 503), closes
// the listener and waits for the requests in flight until ctx ends; then
// it closes the connections left and returns why.
func (h *serving) Drain(ctx context.Context) error {
	if err := h.hs.Shutdown(ctx); err != nil {
		return errors.Join(fmt.Errorf("http shutdown: %w", err), h.hs.Close())
	}
	return nil
}

func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:        s.handler,
		MaxHeaderBytes: maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}
