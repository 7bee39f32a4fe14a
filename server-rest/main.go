// Command server-rest serves vesta-go IDs over HTTP with Vesta's REST
// paths: /genid, /expid, /transtime and /makeid, segment IDs at
// /segment/{tag} and whole ranges at /segment/{tag}/range (segment mode,
// docs/segment.md), plus /healthz, /readyz, /metrics and a status page at
// /ui (its JSON at /status). It listens on :8080 by default; every configuration key can be
// given as a flag, a VESTA_* environment variable or in a config file (see
// docs/configuration.md), and the API is described in docs/rest.md.
//
//	go run ./server-rest --machine 17 --data-dir /var/lib/vesta --segment-tags order
//	curl localhost:8080/genid
//	curl localhost:8080/segment/order
//
// SIGINT or SIGTERM shuts it down gracefully: in-flight requests finish,
// then the time high-water mark is stored and segment mode is closed.
package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
)

var program = app.Program{
	Name:     "server-rest",
	Defaults: config.Defaults{Listen: ":8080", GenMethod: intf.GenMethodREST},
	Groups:   config.RESTGroups(),
	Help: config.Help{
		Summary: "serves vesta-go's unique 64-bit IDs over HTTP: /genid, /expid, /transtime, /makeid, segment IDs at /segment/{tag}, /healthz, /readyz, /metrics.",
		Docs:    []string{"docs/rest.md", "docs/openapi.yaml", "docs/operations.md"},
	},
}

func main() {
	os.Exit(app.Main(program, run))
}

func run(ctx context.Context, cfg config.Config, _ *pflag.FlagSet) error {
	return restapp.Run(ctx, cfg)
}
