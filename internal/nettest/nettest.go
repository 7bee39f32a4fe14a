// Package nettest has loopback servers for tests: Serve runs a handler per
// connection, Silent accepts connections and never answers (for tests of
// timeouts), Proxy stands in front of a server and can be cut (outages);
// DialFrom connects from another loopback address; PipeListener serves
// in-memory connections whose deadlines follow a testing/synctest clock.
package nettest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
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

// DialFrom dials addr over TCP from the local IP from (Linux routes all of
// 127/8 to loopback, so 127.0.0.2 is another client address); the test's
// cleanup closes the connection.
func DialFrom(tb testing.TB, from, addr string) net.Conn {
	tb.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}
