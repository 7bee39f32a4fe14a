// Command barehttp is the baseline of scripts/bench-rest.sh: a bare
// net/http handler that answers every request with a constant decimal ID,
// as text/plain, like server-rest's /genid. What server-rest costs beyond
// it is Echo, the metrics and the ID service.
//
//	go run ./scripts/barehttp --listen 127.0.0.1:0
//	go run ./scripts/barehttp --timeouts=false   # net/http's defaults: no timeouts, as a bare handler has
//
// It prints "listening <addr>" once it accepts connections and stops on
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	timeouts := flag.Bool("timeouts", true, "server-rest's http.Server timeouts (false: none)")
	flag.Parse()
	if err := run(*listen, *timeouts); err != nil {
		fmt.Fprintln(os.Stderr, "barehttp:", err)
		os.Exit(1)
	}
}

var (
	body      = []byte("2705126582500361294")
	textPlain = []string{"text/plain; charset=UTF-8"}
)

func run(addr string, timeouts bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = textPlain
			_, _ = w.Write(body)
		}),
		// The same limits as server-rest (server-rest/internal/restserver/serving.go),
		// so that the comparison measures the handler stack alone.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	if !timeouts {
		srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = 0, 0, 0, 0
	}
	fmt.Println("listening", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
