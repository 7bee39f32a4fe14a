package restserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
	"github.com/vesta-go/vesta/service"
)

// startEmbedded is a StartFunc: the server serves whatever ID service it
// constructs (server-rest's comes from the configuration, internal/server/app).
func startEmbedded(ctx context.Context) (restserver.Service, error) {
	return service.New(ctx, service.Settings{Machine: 78, GenMethod: intf.GenMethodREST, NoDataDir: true,
		Logger: slog.New(slog.DiscardHandler)})
}

// Example serves the REST API in-process on 127.0.0.1 and packs the worked
// example of the Vesta layout through /makeid.
func Example() {
	srv := restserver.New(startEmbedded, restserver.WithLogger(slog.New(slog.DiscardHandler)))
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
	srv := restserver.New(startEmbedded, restserver.WithLogger(slog.New(slog.DiscardHandler)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, "127.0.0.1:0") }()
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
