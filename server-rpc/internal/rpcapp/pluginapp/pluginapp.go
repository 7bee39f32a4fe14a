// Package pluginapp builds server-rpc's plugin mode (--plugin) of a
// configuration: the ID service and segment mode, as internal/rpcapp
// builds them for TCP, served to the go-plugin host that started the
// process through the glue of server-rpc/rpcplugin. It is apart from
// rpcapp because it links go-plugin, which the TCP server does not need.
package pluginapp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf/rpcapi"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcapp"
	"github.com/vesta-go/vesta/server-rpc/rpcplugin"
)

// ErrNotAPluginHost is Run's error when no go-plugin host started the
// process.
var ErrNotAPluginHost = errors.New("--plugin: this process was not started by a go-plugin host " +
	"(the handshake cookie is missing): launch it with plugin.Launch (package client/plugin), or run without --plugin to serve TCP")

// Run serves the IdService (and segment mode) as a go-plugin plugin
// until the host stops it (or goes away), then closes the service and
// segment mode. Logs go to stderr as hclog-style JSON, which the host
// reads. SIGINT is left to the host, as go-plugin expects; SIGTERM closes
// them and exits.
func Run(cfg config.Config) error {
	if h := rpcplugin.Handshake; os.Getenv(h.MagicCookieKey) != h.MagicCookieValue {
		// Checked before the service opens its data dir: plugin.Serve
		// would exit the process without closing it.
		return ErrNotAPluginHost
	}
	log := rpcplugin.PluginLogger(os.Stderr, cfg.LogLevel)
	cfg.Service.Logger = log // the service's and segment mode's (segconfig)
	// The host started this process and holds the only client certificate
	// go-plugin's automatic mutual TLS accepts.
	warnIgnored(log, cfg)
	seg, err := rpcapp.OpenSegments(context.Background(), cfg)
	if err != nil {
		return err
	}
	svc, err := app.StartService(context.Background(), cfg)
	if err != nil {
		return errors.Join(err, seg.Close())
	}
	var once sync.Once
	var closeErr error
	closeSvc := func() error {
		once.Do(func() {
			if err := svc.Close(); err != nil {
				closeErr = fmt.Errorf("closing the id service: %w", err)
			}
			closeErr = errors.Join(closeErr, seg.Close())
		})
		return closeErr
	}

	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	go func() {
		if _, ok := <-term; !ok {
			return
		}
		log.Info("vesta plugin: SIGTERM: closing the id service")
		code := 0
		if err := closeSvc(); err != nil {
			log.Error("vesta plugin: closing", "err", err)
			code = 1
		}
		os.Exit(code)
	}()

	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: rpcplugin.Handshake,
		Plugins:         rpcplugin.PluginSet(rpcapi.NewReceiver(svc, cfg.MaxBatch, rpcapp.ReceiverOptions(cfg, seg)...)),
		Logger: hclog.New(&hclog.LoggerOptions{
			Name: "server-rpc", Output: os.Stderr, JSONFormat: true,
			Level: hclog.LevelFromString(cfg.LogLevel.String()),
		}),
	})
	if err := closeSvc(); err != nil {
		return err
	}
	log.Info("vesta: stopped", "server", "plugin")
	return nil
}
