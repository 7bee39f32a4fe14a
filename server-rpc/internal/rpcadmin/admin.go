package rpcadmin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/connlimit"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/ops"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
)

// Options configure an Admin.
type Options struct {
	// Type is the service's ID type (the metrics' labels).
	Type intf.IdType
	// Runtime is the server's runtime, whose readiness, ID service and
	// segment mode the endpoints report (required).
	Runtime *runtime.Runtime
	// MachineProvider and MachineSource say where the machine id comes
	// from, for the status page (config.Config's).
	MachineProvider, MachineSource string
	// Guard checks /metrics (the metrics scope) when it requires tokens;
	// nil checks nothing.
	Guard *access.Guard
	// Certs, when set, serves TLS only.
	Certs *tlsserve.Certs
	// MaxConnsPerIP caps the admin connections one remote IP holds (the
	// configuration's maxConnsPerIP, as on the RPC port); 0 means
	// rpcserver.DefaultMaxConnsPerIP.
	MaxConnsPerIP int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Admin serves the admin endpoints of one server-rpc over its runtime.
// Build it with New before the runtime starts (it answers /readyz as the
// runtime's readiness says: "starting" meanwhile), hand it the RPC server
// (SetServer) once it is there, and pass it to the receiver
// (rpcapi.WithObserver).
type Admin struct {
	opts    Options
	log     *slog.Logger
	reg     *prometheus.Registry
	handler http.Handler // the operations surface (internal/server/ops)
	calls   *callMetrics

	refused prometheus.Counter // connections over MaxConnsPerIP
	srv     atomic.Pointer[rpcserver.Server]
}

// New builds the admin endpoints; it does no I/O.
func New(opts Options) (*Admin, error) {
	if _, err := opts.Type.Layout(); err != nil {
		return nil, fmt.Errorf("rpcadmin: %w", &intf.FieldError{Field: "Type", Value: int64(opts.Type), Min: 0, Max: 1})
	}
	if opts.Runtime == nil {
		return nil, errors.New("rpcadmin: Options.Runtime is required")
	}
	a := &Admin{opts: opts, log: opts.Logger, reg: prometheus.NewRegistry()}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.calls = newCallMetrics(opts.Type)
	if err := a.calls.register(a.reg); err != nil {
		return nil, err
	}
	if err := a.reg.Register(connCollector{a}); err != nil {
		return nil, fmt.Errorf("rpcadmin: %w", err)
	}
	a.refused = prometheus.NewCounter(prometheus.CounterOpts{Name: "vesta_admin_connections_refused_total",
		Help: "Admin listener connections closed at accept: their remote IP already held maxConnsPerIP, or the listener held its 64 and none was idle."})
	if err := a.reg.Register(a.refused); err != nil {
		return nil, fmt.Errorf("rpcadmin: %w", err)
	}
	err := coremetrics.Register(a.reg, opts.Runtime.Metrics(coremetrics.Source{
		Type:  opts.Type,
		Certs: opts.Certs,
		TLS:   a.tlsStats,
		Guard: opts.Guard,
	}))
	if err != nil {
		return nil, err
	}
	h, err := ops.New(ops.Options{
		Readiness: opts.Runtime.Health,
		Metrics:   promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}),
		Page:      a.pageOptions(),
		Guard:     opts.Guard,
	})
	if err != nil {
		return nil, err
	}
	a.handler = h
	return a, nil
}

// SetServer hands over the RPC server, whose connections are counted.
func (a *Admin) SetServer(s *rpcserver.Server) { a.srv.Store(s) }

// Registry is the registry /metrics serves, for more collectors.
func (a *Admin) Registry() *prometheus.Registry { return a.reg }

// Handler serves every endpoint.
func (a *Admin) Handler() http.Handler { return a.handler }

// tlsStats are the RPC port's handshake counters (as server-rest's are
// its port's), not the admin listener's.
func (a *Admin) tlsStats() (tlsserve.Stats, bool) {
	if s := a.srv.Load(); s != nil && a.opts.Certs != nil {
		return s.Stats().TLS, true
	}
	return tlsserve.Stats{}, false
}

// HTTP limits of the admin listener: a slow or oversized client cannot
// hold a connection or memory for long.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 16 << 10
	shutdownTimeout   = 5 * time.Second
)

// Serve serves the endpoints on ln (over TLS with Options.Certs) until
// ctx ends, then shuts down within a few seconds; it closes ln. A
// cancelled ctx is a clean exit: nil.
func (a *Admin) Serve(ctx context.Context, ln net.Listener) error {
	if a.opts.Certs != nil {
		ln = tlsserve.NewListener(ln, a.opts.Certs.ServerConfig(), tlsserve.Options{PlainHTTPReply: tlsserve.HTTPSOnlyReply, Logger: a.log})
	}
	perIP := a.opts.MaxConnsPerIP
	if perIP <= 0 {
		perIP = rpcserver.DefaultMaxConnsPerIP
	}
	// Admitted before the TLS handshake, which their first read does
	// within the read deadline.
	limiter := connlimit.New(ln, perIP, connlimit.Options{MaxConns: serverdefaults.AdminMaxConns, Refused: a.refused.Inc,
		Logger: a.log, Name: "admin"})
	ln = limiter
	hs := &http.Server{
		Handler:           a.handler,
		ConnState:         limiter.ConnState,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("admin listener: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("admin listener: %w", err)
	}
	return nil
}
