package app

import (
	"context"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
)

// RuntimeOptions are the options of cfg's runtime (internal/server/runtime):
// the ID service (StartService), segment mode (OpenSegments), the
// shutdown timeout and the logger. Each door adds what its segment calls
// answer while the store is retried (SegmentAnswer).
func RuntimeOptions(cfg config.Config) runtime.Options {
	return runtime.Options{
		Start: func(ctx context.Context) (runtime.Service, error) {
			svc, err := StartService(ctx, cfg)
			if err != nil { // a nil *Service must stay a nil Service
				return nil, err
			}
			return svc, nil
		},
		OpenSegments: func(ctx context.Context) (runtime.Segments, error) {
			g, err := OpenSegments(ctx, cfg)
			if err != nil || g == nil { // a nil *Generator must stay a nil Segments: off
				return nil, err
			}
			return g, nil
		},
		ShutdownTimeout: cfg.ShutdownTimeout,
		Logger:          cfg.Service.Logger,
	}
}
