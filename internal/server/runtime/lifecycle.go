package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/internal/serverdefaults"
)

// lifecycle is the life of one server run, written once for server-rest,
// server-rpc and its plugin mode (Runtime.Run fills it in): serve, start
// the service, say it is ready, wait for the end (ctx: SIGINT/SIGTERM as Main's), drain the calls
// in flight within ShutdownTimeout, close the service (storing its mark,
// releasing its machine-id lease) and log. run returns an error for Main
// to turn into an exit code.
type lifecycle struct {
	// Name names the server in the log lines: server=rest, rpc, plugin.
	Name string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// ShutdownTimeout bounds Drain (<= 0: serverdefaults.ShutdownTimeout).
	ShutdownTimeout time.Duration
	// Serve, if set, is called at once in its own goroutine, beside Start,
	// and serves until Drain makes it return nil. Its return ends the run:
	// nil means serving ended normally (a plugin's host went away), an
	// error that it failed. A server that opens its listener only once
	// ready waits for its Start inside it.
	Serve func() error
	// Start constructs the service and whatever serves it; it may block
	// (the service waits for the clock) and must return when ctx ends.
	Start func(ctx context.Context) error
	// Ready, if set, is called once Start has returned nil: the server
	// says it serves the IDs ("vesta: listening").
	Ready func()
	// Drain, if set, stops accepting and finishes the calls in flight; it
	// must make Serve return. It, DrainAttrs and Close are called once
	// Start has returned. ctx ends after ShutdownTimeout: an error
	// then means calls were cut short, and fails the run.
	Drain func(ctx context.Context) error
	// DrainAttrs, if set, are more attributes of the "shutting down" line.
	DrainAttrs func() []any
	// Close closes the service and segment mode; run calls it exactly
	// once, however the run ends.
	Close func() error
}

// ErrShutdownIncomplete is Runtime.Run's error when the calls in flight did not
// finish within the shutdown timeout and were cut short.
var ErrShutdownIncomplete = errors.New("shutdown incomplete")

// run runs the server until ctx ends, Start fails or Serve returns, then
// drains and closes it. An end of ctx, even while Start waits, is a clean
// stop: run returns nil and logs "vesta: stopped". Otherwise it returns
// what failed — Start, Serve, a drain cut short by ShutdownTimeout
// (ErrShutdownIncomplete) or Close — and Main logs it and exits 1.
func (l lifecycle) run(ctx context.Context) error {
	if l.Start == nil || l.Close == nil || (l.Serve != nil && l.Drain == nil) {
		// Without Drain nothing would make Serve return: run would hang.
		return errors.New("runtime: Start and Close are required, and Drain with Serve")
	}
	log := cmp.Or(l.Logger, slog.Default())
	timeout := l.ShutdownTimeout
	if timeout <= 0 {
		timeout = serverdefaults.ShutdownTimeout
	}
	var served chan error // nil: nothing serves before Start, or Serve returned
	if l.Serve != nil {
		served = make(chan error, 1)
		go func() { served <- l.Serve() }()
	}
	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	started := make(chan error, 1)
	go func() { started <- l.Start(startCtx) }()

	var err error
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case err = <-served:
			served, running = nil, false
		case serr := <-started:
			started = nil
			switch {
			case serr == nil:
				if l.Ready != nil {
					l.Ready()
				}
			case ctx.Err() == nil: // not cancelled while starting: a failure
				err, running = serr, false
			default:
				running = false
			}
		}
	}

	cancelStart()
	if started != nil {
		<-started // ended by cancelStart: the run stopped for another reason
	}
	attrs := []any{"server", l.Name, "timeout", timeout}
	if l.DrainAttrs != nil {
		attrs = append(attrs, l.DrainAttrs()...)
	}
	log.Info("vesta: shutting down: finishing the calls in flight", attrs...)
	err = errors.Join(err, l.drain(ctx, timeout, log))
	if served != nil {
		err = errors.Join(err, <-served)
	}
	err = errors.Join(err, l.Close())
	if err == nil {
		log.Info("vesta: stopped", "server", l.Name)
	}
	return err
}

// drain runs Drain within timeout; an error is ErrShutdownIncomplete,
// warned of.
func (l lifecycle) drain(ctx context.Context, timeout time.Duration, log *slog.Logger) error {
	if l.Drain == nil {
		return nil
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := l.Drain(dctx)
	if err == nil {
		return nil
	}
	log.Warn("vesta: shutdown incomplete: calls still in flight were cut short", "server", l.Name, "timeout", timeout, "err", err)
	return fmt.Errorf("%w after %s: %w", ErrShutdownIncomplete, timeout, err)
}
