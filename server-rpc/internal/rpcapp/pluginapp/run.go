package pluginapp

import (
	"context"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcapp"
)

// run is plugin mode's door over the runtime (runtime.Door): it serves
// the runtime's service and segment mode to the host once started.
type run struct {
	cfg config.Config
	rt  *runtime.Runtime

	stop     chan struct{} // closed when the run ends
	stopOnce sync.Once
}

// serve serves the service to the host once started. It returns nil when
// the host stops the plugin or goes away (plugin.Serve returns), or when
// the run ends otherwise (SIGTERM): plugin.Serve cannot be stopped, and
// the process exits after the service is closed.
func (r *run) serve() error {
	select {
	case <-r.rt.Started():
	case <-r.stop:
		return nil
	}
	svc, err := r.rt.Service()
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: pluginwire.Handshake,
			Plugins:         pluginwire.PluginSet(rpcapi.NewReceiver(svc, r.cfg.MaxBatch, rpcapp.ReceiverOptions(r.cfg, r.rt)...)),
			Logger: hclog.New(&hclog.LoggerOptions{
				Name: "server-rpc", Output: os.Stderr, JSONFormat: true,
				Level: hclog.LevelFromString(r.cfg.LogLevel.String()),
			}),
		})
	}()
	select {
	case <-done:
	case <-r.stop:
	}
	return nil
}

// drain ends serve: go-plugin has no drain of its own (the host decides
// when the calls end).
func (r *run) drain(context.Context) error {
	r.stopOnce.Do(func() { close(r.stop) })
	return nil
}
