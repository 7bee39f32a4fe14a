package runtime

import (
	"context"
)

// Door is what a door brings to a run: how it serves, and what it does
// around the runtime's start and drain. Only Name is required.
type Door struct {
	// Name names the server in the log lines: server=rest, rpc, plugin.
	Name string
	// Serve, if set, is called at once in its own goroutine, beside the
	// start, and serves until Drain makes it return nil; its return ends
	// the run (nil: serving ended normally, a plugin's host went away).
	Serve func() error
	// Start, if set, is called once the runtime has started (the ID
	// service is constructed): a door that opens its port only once the
	// IDs can be served opens it here. Its error fails the run.
	Start func(ctx context.Context) error
	// Ready, if set, is called once both starts have succeeded: the door
	// says it serves the IDs ("vesta: listening").
	Ready func()
	// Drain stops accepting and finishes the calls in flight until ctx
	// ends; it must make Serve return (required with Serve). The runtime
	// says stopping (Runtime.Drain) before it is called.
	Drain func(ctx context.Context) error
	// DrainAttrs, if set, are more attributes of the "shutting down" line.
	DrainAttrs func() []any
}

// Run runs the door over the runtime until ctx ends (SIGINT/SIGTERM), the
// start fails or Serve returns: it serves, starts the runtime and then the
// door, says ready; at the end it drains — Runtime.Drain, then the
// door's, within the shutdown timeout (cut short: ErrShutdownIncomplete,
// warned of) — and closes the runtime (Close: the ID service, then
// segment mode) exactly once, logging "vesta: shutting down" and "vesta:
// stopped". An end of ctx, even while starting, is a clean stop: nil.
func (r *Runtime) Run(ctx context.Context, d Door) error {
	var drain func(ctx context.Context) error // nil without the door's: Close says stopping
	if d.Drain != nil {
		drain = func(ctx context.Context) error {
			r.Drain()
			return d.Drain(ctx)
		}
	}
	return lifecycle{
		Name: d.Name, Logger: r.log, ShutdownTimeout: r.shutdownTimeout,
		Serve: d.Serve,
		Start: func(ctx context.Context) error {
			if err := r.Start(ctx); err != nil {
				return err
			}
			if d.Start != nil {
				return d.Start(ctx)
			}
			return nil
		},
		Ready:      d.Ready,
		Drain:      drain,
		DrainAttrs: d.DrainAttrs,
		Close:      r.Close,
	}.run(ctx)
}
