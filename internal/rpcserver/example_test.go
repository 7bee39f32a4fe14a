package rpcserver_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// New serves an ID service's Receiver on a listener the caller opens;
// Shutdown answers the calls in flight and makes Serve return
// ErrServerClosed. The service is the caller's to close afterwards.
func ExampleNew() {
	quiet := slog.New(slog.DiscardHandler)
	svc, err := service.New(context.Background(), service.Settings{
		Machine: 78, GenMethod: intf.GenMethodCentral, NoDataDir: true, Logger: quiet,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close() // after Shutdown: it stores the high-water mark

	// Zero Options fields take the defaults (DefaultMaxConns, ...).
	srv, err := rpcserver.New(rpcapi.NewReceiver(svc, 1000), rpcserver.Options{Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }() // Serve closes ln

	c, err := client.New([]string{ln.Addr().String()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	ids, err := c.GenIds(ctx, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fields, _ := c.ExpId(ctx, ids[0])
	fmt.Println(len(ids), "IDs from machine", fields.Machine)
	c.Close()

	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fmt.Println("shutdown:", srv.Shutdown(sctx))
	fmt.Println("serve returned ErrServerClosed:", errors.Is(<-served, rpcserver.ErrServerClosed))
	// Output:
	// 3 IDs from machine 78
	// shutdown: <nil>
	// serve returned ErrServerClosed: true
}
