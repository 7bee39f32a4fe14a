package rpcserver

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// errStopping is what a read of a connection being stopped (Shutdown,
// eviction) returns; the codec turns it into io.EOF.
var errStopping = errors.New("connection stopping")

// conn is one served connection with what the limits need: its IP, when
// it began waiting for a call, and a stop that no later read can undo.
type conn struct {
	net.Conn
	ip netip.Addr
	// idleSince orders the connections waiting for the first byte of a
	// call (a number from Server.idleSeq, larger is later); 0 while a
	// call is being read or after reading ended. Eviction picks the least.
	idleSince atomic.Uint64
	// started is set by the first byte of the first call: an evicted
	// connection that never sent one has nothing to answer and is closed
	// at once, its descriptor freed before the newcomer is served.
	started atomic.Bool

	mu       sync.Mutex
	stopping bool // set by stop: reads may no longer move the deadline

	counted bool // in Server.live and Server.perIP; guarded by Server.mu
}

func newConn(nc net.Conn) *conn {
	c := &conn{Conn: nc}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.ip = a.AddrPort().Addr().Unmap()
	}
	return c
}

// setReadDeadline moves the read deadline unless the connection is being
// stopped: stop's deadline (now) must stay.
func (c *conn) setReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return errStopping
	}
	return c.Conn.SetReadDeadline(t)
}

// stop interrupts the blocked read and fails every later one: net/rpc
// then answers the calls it has read and closes the connection.
func (c *conn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopping = true
	_ = c.Conn.SetReadDeadline(time.Now())
}

func (c *conn) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}
