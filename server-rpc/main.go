package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcapp"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcapp/pluginapp"
)

// DefaultListen is Vesta's central-server (Dubbo) port.
const DefaultListen = ":20880"

func main() {
	var f flags
	p := program(&f, pluginMode(os.Args[1:]))
	os.Exit(app.Main(p, func(ctx context.Context, cfg config.Config, fs *pflag.FlagSet) error {
		if f.plugin || pluginMode(nil) {
			if err := pluginapp.Check(cfg, fs); err != nil {
				return err
			}
			return pluginapp.Run(cfg)
		}
		return rpcapp.Run(ctx, cfg)
	}))
}

// program is server-rpc's start-up: genMethod 1 on TCP, 0 as a plugin.
func program(f *flags, plugin bool) app.Program {
	d := config.Defaults{Listen: DefaultListen, GenMethod: intf.GenMethodCentral, RPC: true}
	if plugin {
		d.GenMethod = intf.GenMethodEmbedded
	}
	return app.Program{Name: "server-rpc", Defaults: d, Flags: f.register, Help: config.Help{
		Summary: "the vesta-go central server: unique 64-bit IDs and segment IDs over net/rpc on TCP, or as a go-plugin plugin (--plugin).",
		Docs:    []string{"docs/rpc.md", "docs/operations.md"},
	}}
}
