package restserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/restserver"
	"github.com/vesta-go/vesta/service/config"
)

// exampleConfig loads a configuration from flags with the one loader of
// every vesta-go main (environment variables and a --config file work too).
func exampleConfig(args ...string) (config.Config, error) {
	fs := pflag.NewFlagSet("example", pflag.ContinueOnError)
	loader := config.Register(fs, config.Defaults{Listen: "127.0.0.1:0", GenMethod: intf.GenMethodREST})
	loader.Stderr = io.Discard // the service logs here; keep the example's output clean
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	return loader.Load()
}

// Example serves the REST API in-process on 127.0.0.1 and packs the worked
// example of the Vesta layout through /makeid.
func Example() {
	cfg, err := exampleConfig("--machine", "78", "--no-data-dir=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := restserver.New(cfg)
	if err := srv.Start(context.Background()); err != nil { // Serve and Run do this themselves
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	resp, err := http.Get(ts.URL + "/makeid?time=371861805&seq=498081&machine=78")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	id, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode, string(id))
	// Output: 200 2705126582500361294
}

// ExampleServer_Run runs the server as server-rest does, until ctx is
// cancelled (server-rest cancels it on SIGINT or SIGTERM).
func ExampleServer_Run() {
	cfg, err := exampleConfig("--listen", "127.0.0.1:0", "--no-data-dir=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := restserver.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready(): // the ID service is up
	case err := <-done: // it could not listen or start
		fmt.Println(err)
		return
	}
	cancel() // graceful shutdown: in-flight requests finish, then the service closes
	fmt.Println("stopped:", <-done)
	// Output: stopped: <nil>
}
