// Package pluginapp builds server-rpc's plugin mode (--plugin) of a
// configuration: the runtime (the ID service and segment mode), as
// internal/rpcapp builds it for TCP, served to the go-plugin host that started the
// process through the glue of server-rpc/internal/pluginwire. It is apart from
// rpcapp because it links go-plugin, which the TCP server does not need.
package pluginapp

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcapp"
)

// ErrNotAPluginHost is Run's error when no go-plugin host started the
// process.
var ErrNotAPluginHost = errors.New("--plugin: this process was not started by a go-plugin host " +
	"(the handshake cookie is missing): launch it with rpcplugin.Launch (package server-rpc/rpcplugin), or run without --plugin to serve TCP")

// Run serves the IdService (and segment mode) as a go-plugin plugin
// until the host stops it (or goes away), then closes the service and
// segment mode: the runtime's run (internal/server/runtime), as the TCP
// server's. Logs go to
// stderr as hclog-style JSON, which the host reads. SIGINT is left to the
// host, as go-plugin expects; SIGTERM ends the run as the host's stop
// does, and the process exits.
func Run(cfg config.Config) error {
	if h := pluginwire.Handshake; os.Getenv(h.MagicCookieKey) != h.MagicCookieValue {
		// Checked before the service opens its data dir: plugin.Serve
		// would exit the process without closing it.
		return ErrNotAPluginHost
	}
	log := pluginwire.PluginLogger(os.Stderr, cfg.LogLevel)
	cfg.Service.Logger = log // the service's and segment mode's (segconfig)
	// The host started this process and holds the only client certificate
	// go-plugin's automatic mutual TLS accepts.
	warnIgnored(log, cfg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	r := &run{cfg: cfg, rt: rpcapp.NewRuntime(cfg), stop: make(chan struct{})}
	return r.rt.Run(ctx, runtime.Door{Name: "plugin", Serve: r.serve, Drain: r.drain})
}
