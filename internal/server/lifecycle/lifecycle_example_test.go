package lifecycle_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/internal/server/lifecycle"
)

// A server passes in its own parts; the lifecycle starts it, says it is
// ready, drains it within the shutdown timeout once ctx ends, and closes
// its service.
func ExampleServer_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	err := lifecycle.Server{
		Name: "example", Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: time.Second,
		Serve: func() error { <-stopped; return nil },
		Start: func(context.Context) error { fmt.Println("service started"); return nil },
		Ready: func() { fmt.Println("ready"); cancel() }, // SIGTERM, say
		Drain: func(context.Context) error { fmt.Println("drained"); close(stopped); return nil },
		Close: func() error { fmt.Println("service closed"); return nil },
	}.Run(ctx)
	fmt.Println("err:", err)
	// Output:
	// service started
	// ready
	// drained
	// service closed
	// err: <nil>
}
