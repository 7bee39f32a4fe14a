package httptimeout_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/vesta-go/vesta/internal/httptimeout"
)

// An http.Server without timeouts of its own, held to them by the
// listener and its ConnState hook.
func Example() {
	limits := httptimeout.Timeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second,
		Idle: 2 * time.Minute}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }),
		ConnState: httptimeout.ConnState,
	}
	go func() { _ = srv.Serve(limits.Listener(ln)) }()
	defer srv.Close()

	resp, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body))
	// Output: 200 OK hello
}
