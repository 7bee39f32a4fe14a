// Package rpcapp builds server-rpc's TCP server of a configuration: the
// runtime (internal/server/runtime: the ID service and segment mode from
// internal/server/app, readiness, drain and close, as server-rest's), the
// net/rpc receiver (rpcapi) over it served by rpcserver with the
// configured limits, TLS and guard, and the admin listener (adminListen)
// reporting it. server-rpc runs it; the plugin mode's composition, which
// links go-plugin, is in the subpackage pluginapp, so that this one links
// none. (internal/restapp is server-rest's counterpart.)
package rpcapp

import (
	"context"
	"errors"

	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
)

// Run serves cfg's RPC server on TCP until ctx is cancelled
// (SIGINT/SIGTERM), then shuts down gracefully, for at most cfg's
// shutdownTimeout, and closes the service, which stores the high-water
// mark, and segment mode (runtime.Runtime.Run). The admin listener answers from
// the start (/readyz: starting) and stops last, so that /readyz says
// stopping while calls drain.
func Run(ctx context.Context, cfg config.Config) (err error) {
	sec, err := app.OpenSecurity(cfg) // before the service: a bad file fails fast
	if err != nil {
		return err
	}
	r := &tcpRun{cfg: cfg, rt: NewRuntime(cfg), opts: ServerOptions(cfg), sec: sec, adminDone: make(chan error, 1),
		up: make(chan struct{}), stop: make(chan struct{})}
	r.admin, err = OpenAdmin(ctx, cfg, sec, r.rt)
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
	return r.rt.Run(ctx, runtime.Door{Name: "rpc", Serve: r.serve, Start: r.start, Ready: r.ready, Drain: r.drain, DrainAttrs: r.conns})
}

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
