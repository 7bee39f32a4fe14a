// Package restapp builds the REST server of a configuration: the ID
// service and segment mode from internal/server/app, served by restserver with
// the configured batch cap, type and logger. server-rest runs it, and its
// tests that need a real server-rest in-process use it too, so the
// composition is written once.
package restapp

import (
	"context"
	"fmt"
	"net"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// New returns the server of cfg; opts come after the configured ones and
// may replace them (tests replace segment mode, say).
func New(cfg config.Config, opts ...restserver.Option) *restserver.Server {
	return restserver.New(Start(cfg), append(Options(cfg), opts...)...)
}

// Run serves cfg's REST server until ctx ends: with its TLS and guard
// (app.OpenSecurity), their files reloaded on change and on SIGHUP, and a
// warning when the listener is open to other hosts without TLS or
// tokens. Its life is the runtime's run (internal/server/runtime): HTTP
// at once, the ID service in the background, drained within
// shutdownTimeout, then closed.
// opts come after the configured ones.
func Run(ctx context.Context, cfg config.Config, opts ...restserver.Option) error {
	sec, err := app.OpenSecurity(cfg)
	if err != nil {
		return err
	}
	srv := New(cfg, append(SecurityOptions(sec), opts...)...)
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	sec.WarnIfExposed(ln.Addr())
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	sec.Watch(watchCtx)
	return srv.Serve(ctx, ln) // the runtime's run
}

// SecurityOptions are the restserver options of sec: TLS and the guard,
// when configured.
func SecurityOptions(sec *app.Security) []restserver.Option {
	var opts []restserver.Option
	if sec.Certs != nil {
		opts = append(opts, restserver.WithTLS(sec.Certs))
	}
	if sec.Guard != nil {
		opts = append(opts, restserver.WithGuard(sec.Guard))
	}
	return opts
}

// Start is the StartFunc of cfg: app.StartService (app.RuntimeOptions).
func Start(cfg config.Config) restserver.StartFunc { return app.RuntimeOptions(cfg).Start }

// Options are the restserver options of cfg: segment mode as configured,
// the batch cap, the call timeout, the per-address connection cap, the
// shutdown timeout, the ID type, where the machine id comes from (for
// /status) and the logger.
func Options(cfg config.Config) []restserver.Option {
	return []restserver.Option{
		restserver.WithSegments(OpenSegments(cfg)),
		restserver.WithMaxBatch(cfg.MaxBatch),
		restserver.WithMaxRange(cfg.SegmentMaxRange),
		restserver.WithCallTimeout(cfg.CallTimeout),
		restserver.WithMaxConnsPerIP(cfg.MaxConnsPerIP),
		restserver.WithMaxConns(cfg.MaxConns),
		restserver.WithShutdownTimeout(cfg.ShutdownTimeout),
		restserver.WithType(cfg.Service.Type),
		restserver.WithMachineSource(cfg.MachineProvider, cfg.MachineSource.String()),
		restserver.WithLogger(cfg.Service.Logger),
	}
}

// OpenSegments is the OpenSegmentsFunc of cfg: app.OpenSegments
// (app.RuntimeOptions), whose errors for a store that cannot be reached
// match intf.ErrUnavailable, so that the runtime retries them in the
// background.
func OpenSegments(cfg config.Config) restserver.OpenSegmentsFunc {
	return app.RuntimeOptions(cfg).OpenSegments
}
