package restserver

import (
	"net"
	"net/http"

	"github.com/vesta-go/vesta/internal/connlimit"
	"github.com/vesta-go/vesta/internal/connwrap"
	"github.com/vesta-go/vesta/internal/httptimeout"
)

// newLimitListener caps the connections held from one remote IP and in
// all (connlimit: one over a cap is closed at accept, before net/http reads
// a byte of it, and at the total the longest-idle one makes room, so that
// no flood takes every connection, descriptor and goroutine of the
// server), and makes net/http's own plain-text errors JSON (jsonConn).
// The limiter needs the http.Server's ConnState.
func (s *Server) newLimitListener(ln net.Listener) (net.Listener, *connlimit.Listener) {
	l := connlimit.New(ln, s.maxConnsPerIP, connlimit.Options{MaxConns: s.maxConns, Refused: s.metrics.connsRefused.Inc,
		Evicted: s.metrics.connsEvicted.Inc, Logger: s.log, Name: "rest"})
	return jsonListener{l}, l
}

// jsonListener wraps each connection in a jsonConn.
type jsonListener struct{ net.Listener }

func (l jsonListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	limited, _ := connwrap.Find[*connlimit.Conn](c)
	timed, _ := connwrap.Find[*httptimeout.Conn](c)
	return &jsonConn{Conn: c, limited: limited, timed: timed}, nil
}

// jsonConn rewrites net/http's plain-text errors (plainToJSON). It keeps
// the layers under it that follow the connection's state (connState), so
// that a request does not walk the wrappers to find them.
type jsonConn struct {
	net.Conn
	limited *connlimit.Conn
	timed   *httptimeout.Conn
}

// connState tells the layers under c of its state (the http.Server's
// ConnState hook); false when c lacks one of them, for the hook to find
// what it has.
func (c *jsonConn) connState(st http.ConnState) bool {
	if c.limited == nil || c.timed == nil {
		return false
	}
	c.limited.ConnState(st)
	c.timed.ConnState(st)
	return true
}

// NetConn is the connection under c (connlimit finds its own by it).
func (c *jsonConn) NetConn() net.Conn { return c.Conn }

// Write sends p, or the JSON form of p when p is one of net/http's own
// error responses. It reports len(p) written on success, as net/http
// expects of the bytes it gave.
func (c *jsonConn) Write(p []byte) (int, error) {
	if j, ok := plainToJSON(p); ok {
		if _, err := c.Conn.Write(j); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite lets net/http half-close after its 431 answer (it looks for
// the method), so the client reads the answer before the connection ends.
func (c *jsonConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
