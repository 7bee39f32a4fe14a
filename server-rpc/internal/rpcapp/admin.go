package rpcapp

import (
	"context"
	"fmt"
	"net"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcadmin"
)

// AdminListener is server-rpc's admin listener (adminListen): the
// endpoints and the socket they are served on.
type AdminListener struct {
	*rpcadmin.Admin
	ln net.Listener
}

// OpenAdmin listens on cfg's adminListen and builds its endpoints over
// rt (its readiness, service and segment mode), with sec's TLS and guard.
// It returns nil, and no error, when adminListen is not set. It binds at
// once, so that a port in use fails the start before the service does.
func OpenAdmin(ctx context.Context, cfg config.Config, sec *app.Security, rt *runtime.Runtime) (*AdminListener, error) {
	if cfg.AdminListen == "" {
		return nil, nil
	}
	a, err := rpcadmin.New(rpcadmin.Options{Type: cfg.Service.Type, Runtime: rt,
		MachineProvider: cfg.MachineProvider, MachineSource: cfg.MachineSource.String(),
		Guard: sec.Guard, Certs: sec.Certs, Logger: sec.Logger(), MaxConnsPerIP: cfg.MaxConnsPerIP})
	if err != nil {
		return nil, err
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", cfg.AdminListen)
	if err != nil {
		return nil, fmt.Errorf("config key %s: %w", config.KeyAdminListen, err)
	}
	sec.WarnAdminExposed(ln.Addr())
	sec.Logger().Info("vesta: admin listening", "addr", ln.Addr().String(), "tls", sec.Certs != nil,
		"endpoints", "/metrics /healthz /readyz /status /ui")
	return &AdminListener{Admin: a, ln: ln}, nil
}

// Addr is where the admin listener listens.
func (l *AdminListener) Addr() net.Addr { return l.ln.Addr() }

// Serve serves until ctx ends (rpcadmin.Admin.Serve).
func (l *AdminListener) Serve(ctx context.Context) error { return l.Admin.Serve(ctx, l.ln) }
