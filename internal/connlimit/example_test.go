package connlimit_test

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/vesta-go/vesta/internal/connlimit"
)

func ExampleNew() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	// At most 64 connections from one address; the 65th is closed at
	// accept. Serve HTTP (or anything) on the result as on ln.
	capped := connlimit.New(ln, 64, connlimit.Options{Name: "admin", Logger: slog.New(slog.DiscardHandler)})
	defer capped.Close()
	fmt.Println(capped.Held("127.0.0.1"))
	// Output: 0
}
