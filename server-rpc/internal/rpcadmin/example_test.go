package rpcadmin_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

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

// New builds the admin endpoints before the ID service starts: /readyz
// says "starting" until SetService hands the service over, and
// "stopping" once Stopping is called at shutdown; /healthz is 200
// throughout. Serve runs until its context ends.
func ExampleNew() {
	quiet := slog.New(slog.DiscardHandler)
	admin, err := rpcadmin.New(rpcadmin.Options{Type: intf.MaxPeak, Logger: quiet})
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

	svc, err := service.New(context.Background(), service.Settings{
		Machine: 5, GenMethod: intf.GenMethodCentral, Type: intf.MaxPeak, NoDataDir: true, Logger: quiet,
	})
	if err != nil {
		fmt.Println(err)
		cancel()
		<-served
		return
	}
	defer svc.Close()
	admin.SetService(svc)
	get(base + "/readyz")

	admin.Stopping()
	get(base + "/readyz")

	cancel()
	fmt.Println("serve:", <-served)
	// Output:
	// 200 {"status":"ok"}
	// 503 {"status":"starting","error":"id service is starting (claiming its machine id, or waiting for the clock to pass the time high-water mark): retry shortly"}
	// 200 {"status":"ready"}
	// 503 {"status":"stopping","error":"server is shutting down"}
	// serve: <nil>
}
