// Package rpcapp builds server-rpc's TCP server of a configuration: the
// ID service and segment mode from internal/server/app (segment mode through
// internal/segopen, retried in the background when its store cannot be
// reached at start, as server-rest's), the net/rpc receiver (rpcapi)
// served by rpcserver with the configured limits, TLS and guard, and the
// admin listener (adminListen). server-rpc runs it; the plugin mode's
// composition, which links go-plugin, is in the subpackage pluginapp, so
// that this one links none. (internal/restapp is server-rest's
// counterpart.)
package rpcapp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/intf/rpcapi"
	"github.com/vesta-go/vesta/service/rpcserver"
)

// Run serves cfg's RPC server on TCP until ctx is cancelled
// (SIGINT/SIGTERM), then shuts down gracefully, for at most cfg's
// shutdownTimeout, and closes the service, which stores the high-water
// mark, and segment mode.
func Run(ctx context.Context, cfg config.Config) (err error) {
	log := cfg.Service.Logger
	opts := ServerOptions(cfg)
	if cfg.ShutdownTimeout <= 0 { // a Config not from the loader
		cfg.ShutdownTimeout = config.DefaultShutdownTimeout
	}
	sec, err := app.OpenSecurity(cfg) // before the service: a bad file fails fast
	if err != nil {
		return err
	}
	var segRef atomic.Pointer[Segments] // read by the admin's scrapes
	// The admin listener answers from the start (/readyz: starting) and
	// stops last, so that /readyz says stopping while calls drain.
	admin, err := OpenAdmin(ctx, cfg, sec, func() coremetrics.Segments { return segRef.Load().metrics() },
		func() bool { return segRef.Load().Off() })
	if err != nil {
		return err
	}
	adminDone := make(chan error, 1)
	if admin != nil {
		adminCtx, stopAdmin := context.WithCancel(context.WithoutCancel(ctx))
		go func() { adminDone <- admin.Serve(adminCtx) }()
		defer func() {
			stopAdmin()
			err = errors.Join(err, <-adminDone)
		}()
	}
	seg, err := OpenSegments(ctx, cfg)
	if err != nil {
		return err
	}
	segRef.Store(seg)
	defer func() { err = errors.Join(err, seg.Close()) }()
	svc, err := app.StartService(ctx, cfg)
	if err != nil {
		return err
	}
	var observe rpcapi.ReceiverOption = rpcapi.WithObserver(nil)
	if admin != nil {
		admin.SetService(svc)
		observe = rpcapi.WithObserver(admin)
	}
	defer func() {
		if cerr := svc.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing the id service: %w", cerr))
		} else {
			log.Info("vesta: stopped", "server", "rpc")
		}
	}()
	opts.TLS = sec.Certs
	srv, err := rpcserver.New(rpcapi.NewReceiver(svc, cfg.MaxBatch,
		append(ReceiverOptions(cfg, seg), rpcapi.WithGuard(sec.Guard), observe)...), opts)
	if err != nil {
		return err
	}
	if admin != nil {
		admin.SetServer(srv)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return err
	}
	sec.WarnIfExposed(ln.Addr())
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	sec.Watch(watchCtx)
	log.Info("vesta: listening", "server", "rpc", "addr", ln.Addr().String(), "tls", sec.Certs != nil, "service", rpcapi.ServiceName,
		"maxBatch", cfg.MaxBatch, "maxConns", opts.MaxConns, "maxConnsPerIP", opts.MaxConnsPerIP,
		"maxMessageBytes", opts.MaxMessageBytes, "callTimeout", cfg.CallTimeout)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("serving %s: %w", ln.Addr(), err)
	case err := <-adminDone:
		adminDone <- nil // for the deferred wait
		srv.Shutdown(context.Background())
		<-served
		return err
	case <-ctx.Done():
	}
	if admin != nil {
		admin.Stopping()
	}
	log.Info("vesta: shutting down: finishing the calls in flight", "server", "rpc", "timeout", cfg.ShutdownTimeout, "conns", srv.Stats().Open)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("vesta rpc: shutdown incomplete", "err", err)
	}
	<-served
	st := srv.Stats()
	log.Info("vesta rpc: connection totals", "accepted", st.Accepted, "refusedPerIP", st.RefusedPerIP,
		"refusedFull", st.RefusedFull, "evicted", st.Evicted, "firstByteTimeouts", st.FirstByteTimeouts,
		"idleTimeouts", st.IdleTimeouts, "messageTimeouts", st.MessageTimeouts, "writeTimeouts", st.WriteTimeouts,
		"tooBig", st.TooBig)
	if sec.Certs != nil {
		log.Info("vesta rpc: TLS totals", "handshakes", st.TLS.Handshakes, "failures", st.TLS.Failures)
	}
	if sec.Guard != nil {
		log.Info("vesta rpc: refused calls", "byReason", sec.Guard.Stats().Refusals)
	}
	return nil
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
