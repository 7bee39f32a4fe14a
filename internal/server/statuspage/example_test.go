package statuspage_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/vesta-go/vesta/internal/server/statuspage"
	"github.com/vesta-go/vesta/service"
)

// A door serves the page over its ID service: here the whole of it on a
// listener of its own, as an admin port would (put the door's token check
// in front of /status).
func Example() {
	svc, err := service.New(context.Background(), service.Settings{Machine: 3, NoDataDir: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer svc.Close()
	var issued atomic.Uint64 // the door counts what it issues
	page, err := statuspage.New(statuspage.Options{
		Service: func() statuspage.Service { return svc },
		Issued:  issued.Load,
		State:   func() (string, string) { return "ready", "" },
		Server:  "rpc",
	})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(page.Handler())
	defer ts.Close()

	if _, err := svc.GenId(context.Background()); err == nil {
		issued.Add(1)
	}
	st := page.Snapshot()
	fmt.Println(st.State, *st.Machine.Id, st.Layout.Type, st.Ids.Issued, st.Layout.CapacityPerSecond)
	resp, err := http.Get(ts.URL + statuspage.PathUI)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"))
	// Output:
	// ready 3 max-peak 1 1048576
	// text/html; charset=utf-8
}
