package rpcadmin_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/internal/rpcadmin"
	"github.com/vesta-go/vesta/service"
)

// get prints the status code and body of a GET.
func get(url string) {
	resp, err := http.Get(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))
}

// New builds the admin endpoints over the server's runtime before it
// starts: /readyz says "starting" until the runtime has started its ID
// service, and "stopping" once the drain begins; /healthz is 200
// throughout. Serve runs until its context ends.
func ExampleNew() {
	quiet := slog.New(slog.DiscardHandler)
	rt := runtime.New(runtime.Options{Logger: quiet, Start: func(ctx context.Context) (runtime.Service, error) {
		return service.New(ctx, service.Settings{
			Machine: 5, GenMethod: intf.GenMethodCentral, Type: intf.MaxPeak, NoDataDir: true, Logger: quiet,
		})
	}})
	defer rt.Close()
	admin, err := rpcadmin.New(rpcadmin.Options{Type: intf.MaxPeak, Runtime: rt, Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- admin.Serve(ctx, ln) }() // Serve closes ln
	base := "http://" + ln.Addr().String()

	get(base + "/healthz")
	get(base + "/readyz")

	if err := rt.Start(context.Background()); err != nil {
		fmt.Println(err)
		cancel()
		<-served
		return
	}
	get(base + "/readyz")

	rt.Drain()
	get(base + "/readyz")

	cancel()
	fmt.Println("serve:", <-served)
	// Output:
	// 200 {"status":"ok"}
	// 503 {"status":"starting","error":"segment mode is starting (opening the segment store): retry shortly"}
	// 200 {"status":"ready"}
	// 503 {"status":"stopping","error":"server is shutting down"}
	// serve: <nil>
}
