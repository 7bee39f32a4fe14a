// Command barerpc is the baseline of scripts/client-size.sh: the least a Go
// program needs to call an RPC server the way package client does — a TLS
// connection and one net/rpc call — and nothing else. The size of its
// binary is what the standard library alone costs such a client; what
// sample/rpc-client weighs beyond it is package client (fail-over, segment
// ranges, tokens) and the sample's own flags and output.
//
//	go run ./scripts/barerpc 127.0.0.1:8081
package main

import (
	"crypto/tls"
	"fmt"
	"net/rpc"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: barerpc HOST:PORT")
		os.Exit(2)
	}
	conn, err := tls.Dial("tcp", os.Args[1], &tls.Config{MinVersion: tls.VersionTLS12})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c := rpc.NewClient(conn)
	defer c.Close()
	var id int64
	if err := c.Call("IdService.GenId", struct{}{}, &id); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(id)
}
