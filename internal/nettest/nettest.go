// Package nettest has loopback listeners that misbehave, for tests of
// timeouts: one that accepts connections and never answers.
package nettest

import (
	"net"
	"sync"
	"testing"
)

// Silent listens on 127.0.0.1, accepts every connection and never writes
// to it; the test's cleanup closes the listener and the connections. It
// returns the address.
func Silent(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("nettest: %v", err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
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
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
