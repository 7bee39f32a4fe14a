// Package nettest has loopback servers for tests: Serve runs a handler per
// connection, Silent accepts connections and never answers (for tests of
// timeouts), Proxy stands in front of a server and can be cut (outages).
package nettest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Serve listens on 127.0.0.1 and runs handle in a goroutine for every
// connection. The test's cleanup closes the listener and every connection
// and waits for the handlers. It returns the address.
func Serve(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("nettest: %v", err)
	}
	var (
		mu     sync.Mutex // guards conns and closed
		conns  []net.Conn
		closed bool
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed { // accepted as the cleanup ran: it would never close c
				mu.Unlock()
				c.Close()
				return
			}
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
			}()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// Silent is a server that accepts every connection, reads what comes and
// never writes a byte.
func Silent(tb testing.TB) string {
	tb.Helper()
	return Serve(tb, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}
