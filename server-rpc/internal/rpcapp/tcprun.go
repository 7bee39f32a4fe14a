package rpcapp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
)

// tcpRun is the TCP server's door over the runtime (runtime.Door): its
// start, serving and drain. start sets srv and ln up; the run reads them
// only once start has returned, serve once up is closed.
type tcpRun struct {
	cfg       config.Config
	rt        *runtime.Runtime
	opts      rpcserver.Options
	sec       *app.Security
	admin     *AdminListener  // nil without adminListen
	adminDone chan error      // the admin listener's end
	watchCtx  context.Context // the security files' reloads

	srv *rpcserver.Server
	ln  net.Listener

	up       chan struct{} // closed once ln serves the IDs
	stop     chan struct{} // closed when the drain begins
	stopOnce sync.Once
}

// start, once the runtime has started, builds the receiver over its
// service and segment mode and listens on cfg's listen address: the RPC
// port opens only once the IDs can be served.
func (r *tcpRun) start(ctx context.Context) error {
	svc, err := r.rt.Service()
	if err != nil {
		return err
	}
	var observe = rpcapi.WithObserver(nil)
	if r.admin != nil {
		observe = rpcapi.WithObserver(r.admin)
	}
	opts := r.opts
	opts.TLS = r.sec.Certs
	srv, err := rpcserver.New(rpcapi.NewReceiver(svc, r.cfg.MaxBatch,
		append(ReceiverOptions(r.cfg, r.rt), rpcapi.WithGuard(r.sec.Guard), observe)...), opts)
	if err != nil {
		return err
	}
	if r.admin != nil {
		r.admin.SetServer(srv)
	}
	if r.ln, err = new(net.ListenConfig).Listen(ctx, "tcp", r.cfg.Listen); err != nil {
		return err
	}
	r.srv = srv
	r.sec.WarnIfExposed(r.ln.Addr())
	r.sec.Watch(r.watchCtx)
	close(r.up)
	return nil
}

// ready says where the IDs are served.
func (r *tcpRun) ready() {
	r.cfg.Service.Logger.Info("vesta: listening", "server", "rpc", "addr", r.ln.Addr().String(), "tls", r.sec.Certs != nil,
		"service", rpcapi.ServiceName, "maxBatch", r.cfg.MaxBatch, "maxConns", r.opts.MaxConns, "maxConnsPerIP", r.opts.MaxConnsPerIP,
		"maxMessageBytes", r.opts.MaxMessageBytes, "callTimeout", r.cfg.CallTimeout)
}

// serve serves the RPC port once start has opened it, until the drain;
// the admin listener failing ends it too.
func (r *tcpRun) serve() error {
	select {
	case <-r.up:
	case <-r.stop:
		return nil
	case err := <-r.adminDone:
		r.adminDone <- nil // for Run's wait
		return err
	}
	served := make(chan error, 1)
	go func() { served <- r.srv.Serve(r.ln) }()
	select {
	case err := <-served:
		if errors.Is(err, rpcserver.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serving %s: %w", r.ln.Addr(), err)
	case err := <-r.adminDone:
		r.adminDone <- nil
		return err
	}
}

// conns is the "shutting down" line's count of open connections.
func (r *tcpRun) conns() []any {
	if r.srv == nil {
		return nil
	}
	return []any{"conns", r.srv.Stats().Open}
}

// drain, once the runtime says stopping on /readyz, stops accepting and
// reading calls, waits for the calls read until ctx ends, and logs the
// server's totals.
func (r *tcpRun) drain(ctx context.Context) error {
	r.stopOnce.Do(func() { close(r.stop) })
	if r.srv == nil {
		return nil
	}
	err := r.srv.Shutdown(ctx)
	r.logTotals()
	return err
}

// logTotals logs what the connections, TLS and the guard counted.
func (r *tcpRun) logTotals() {
	log := r.cfg.Service.Logger
	st := r.srv.Stats()
	log.Info("vesta rpc: connection totals", "accepted", st.Accepted, "refusedPerIP", st.RefusedPerIP,
		"refusedFull", st.RefusedFull, "evicted", st.Evicted, "firstByteTimeouts", st.FirstByteTimeouts,
		"idleTimeouts", st.IdleTimeouts, "messageTimeouts", st.MessageTimeouts, "writeTimeouts", st.WriteTimeouts,
		"tooBig", st.TooBig, "badTypes", st.BadTypes)
	if r.sec.Certs != nil {
		log.Info("vesta rpc: TLS totals", "handshakes", st.TLS.Handshakes, "failures", st.TLS.Failures)
	}
	if r.sec.Guard != nil {
		log.Info("vesta rpc: refused calls", "byReason", r.sec.Guard.Stats().Refusals)
	}
}
