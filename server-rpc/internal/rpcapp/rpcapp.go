// Package rpcapp builds server-rpc's TCP server of a configuration: the
// ID service and segment mode from internal/server/app (segment mode through
// internal/server/segopen, retried in the background when its store cannot be
// reached at start, as server-rest's), the net/rpc receiver (rpcapi)
// served by rpcserver with the configured limits, TLS and guard, and the
// admin listener (adminListen), run by internal/server/lifecycle as
// server-rest is. server-rpc runs it; the plugin mode's composition, which
// links go-plugin, is in the subpackage pluginapp, so that this one links
// none. (internal/restapp is server-rest's counterpart.)
package rpcapp

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/lifecycle"
)

// Run serves cfg's RPC server on TCP until ctx is cancelled
// (SIGINT/SIGTERM), then shuts down gracefully, for at most cfg's
// shutdownTimeout, and closes the service, which stores the high-water
// mark, and segment mode (lifecycle.Server). The admin listener answers from
// the start (/readyz: starting) and stops last, so that /readyz says
// stopping while calls drain.
func Run(ctx context.Context, cfg config.Config) (err error) {
	sec, err := app.OpenSecurity(cfg) // before the service: a bad file fails fast
	if err != nil {
		return err
	}
	r := &tcpRun{cfg: cfg, opts: ServerOptions(cfg), sec: sec, adminDone: make(chan error, 1),
		up: make(chan struct{}), stop: make(chan struct{})}
	r.admin, err = OpenAdmin(ctx, cfg, sec, func() coremetrics.Segments { return r.segRef.Load().metrics() },
		func() bool { return r.segRef.Load().Off() })
	if err != nil {
		return err
	}
	if r.admin != nil {
		adminCtx, stopAdmin := context.WithCancel(context.WithoutCancel(ctx))
		go func() { r.adminDone <- r.admin.Serve(adminCtx) }()
		defer func() {
			stopAdmin()
			err = errors.Join(err, <-r.adminDone)
		}()
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	r.watchCtx = watchCtx
	return lifecycle.Server{
		Name: "rpc", Logger: cfg.Service.Logger, ShutdownTimeout: cfg.ShutdownTimeout,
		Serve: r.serve, Start: r.start, Ready: r.ready, Drain: r.drain, DrainAttrs: r.conns, Close: r.close,
	}.Run(ctx)
}

// segRef is segment mode for the admin's scrapes, set by start.
type segRef = atomic.Pointer[Segments]

// ServerOptions are the rpcserver options of cfg: its limits (the rpc
// group and maxConnsPerIP) and logger; Run adds the TLS.
func ServerOptions(cfg config.Config) rpcserver.Options {
	return rpcserver.Options{
		MaxConns: cfg.MaxConns, MaxConnsPerIP: cfg.MaxConnsPerIP, MaxCallsPerConn: cfg.RPC.MaxCallsPerConn, MaxMessageBytes: cfg.RPC.MaxMessageBytes,
		FirstByteTimeout: cfg.RPC.FirstByteTimeout, IdleTimeout: cfg.RPC.IdleTimeout,
		MessageTimeout: cfg.RPC.MessageTimeout, WriteTimeout: cfg.RPC.WriteTimeout,
		Logger: cfg.Service.Logger,
	}
}
