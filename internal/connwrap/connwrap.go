// Package connwrap finds a connection under the wrappers a server stacks
// on it (tls.Conn, or its own) through their NetConn methods: what a
// net/http ConnState hook, which gets the outermost, needs to reach the
// layer it keeps state in (Find), or the socket at the bottom (Innermost).
package connwrap

import "net"

// Innermost is the connection at the bottom of c's layers (the socket,
// under TLS and the servers' wrappers): c when c has no NetConn; after
// maxDepth layers, the last one reached.
func Innermost(c net.Conn) net.Conn {
	for range maxDepth {
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = w.NetConn()
	}
	return c
}

// maxDepth bounds the walk: a wrapper whose NetConn returns itself must
// not loop.
const maxDepth = 8

// Find returns the T under c: c itself, or what NetConn gives, layer by
// layer. false when a layer has no NetConn, or after maxDepth layers.
func Find[T net.Conn](c net.Conn) (T, bool) {
	for range maxDepth {
		if t, ok := c.(T); ok {
			return t, true
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = w.NetConn()
	}
	var zero T
	return zero, false
}
