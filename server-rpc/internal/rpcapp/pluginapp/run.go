package pluginapp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcapp"
	"github.com/vesta-go/vesta/service"
)

// run is what plugin mode passes to lifecycle.Server. start sets seg and
// svc; serve reads them once up is closed, the lifecycle's drain and
// close once start has returned.
type run struct {
	cfg config.Config
	seg *rpcapp.Segments
	svc *service.Service

	up       chan struct{} // closed once the service is started
	stop     chan struct{} // closed when the run ends
	stopOnce sync.Once
}

// start opens segment mode and starts the ID service.
func (r *run) start(ctx context.Context) error {
	var err error
	if r.seg, err = rpcapp.OpenSegments(ctx, r.cfg); err != nil {
		return err
	}
	if r.svc, err = app.StartService(ctx, r.cfg); err != nil {
		return err
	}
	close(r.up)
	return nil
}

// serve serves the service to the host once started. It returns nil when
// the host stops the plugin or goes away (plugin.Serve returns), or when
// the run ends otherwise (SIGTERM): plugin.Serve cannot be stopped, and
// the process exits after the service is closed.
func (r *run) serve() error {
	select {
	case <-r.up:
	case <-r.stop:
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: pluginwire.Handshake,
			Plugins:         pluginwire.PluginSet(rpcapi.NewReceiver(r.svc, r.cfg.MaxBatch, rpcapp.ReceiverOptions(r.cfg, r.seg)...)),
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

// close closes the ID service, which stores the high-water mark, then
// segment mode.
func (r *run) close() error {
	var err error
	if r.svc != nil {
		if cerr := r.svc.Close(); cerr != nil {
			err = fmt.Errorf("closing the id service: %w", cerr)
		}
	}
	return errors.Join(err, r.seg.Close())
}
