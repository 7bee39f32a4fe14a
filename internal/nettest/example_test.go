package nettest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vesta-go/vesta/internal/nettest"
)

func ExamplePipeListener() {
	ln := nettest.NewPipeListener()
	defer ln.Close()
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hello")
		}))
	}()
	c, err := ln.Dial()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(c)
	fmt.Println(strings.HasSuffix(string(b), "hello"))
	// Output: true
}
