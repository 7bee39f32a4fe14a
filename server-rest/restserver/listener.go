package restserver

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// refusalLogEvery spaces the warnings about refused connections, so that a
// flood of them cannot flood the log.
const refusalLogEvery = 10 * time.Second

// limitListener caps the connections held from one remote IP: one over
// the cap is closed at accept, before net/http reads a byte of it, so a
// single address cannot take every connection (and goroutine) of the
// server. Its conns also answer net/http's own plain-text errors as JSON
// (jsonConn).
type limitListener struct {
	net.Listener
	max     int
	log     *slog.Logger
	refused func() // counts a refusal (metrics)

	mu       sync.Mutex
	perIP    map[string]int
	lastWarn time.Time
	unlogged int // refusals since the last warning
}

func newLimitListener(ln net.Listener, max int, log *slog.Logger, refused func()) *limitListener {
	return &limitListener{Listener: ln, max: max, log: log, refused: refused, perIP: map[string]int{}}
}

// Accept returns the next connection within the cap, closing those over it.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c.RemoteAddr())
		if l.admit(ip) {
			return &jsonConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		_ = c.Close()
		l.refused()
		l.warn(ip)
	}
}

func (l *limitListener) admit(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[ip] >= l.max {
		return false
	}
	l.perIP[ip]++
	return true
}

func (l *limitListener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip) // the map holds only addresses with connections
	}
}

// warn logs a refusal at most once per refusalLogEvery, with how many
// were refused since the last warning.
func (l *limitListener) warn(ip string) {
	l.mu.Lock()
	l.unlogged++
	now := time.Now()
	if now.Sub(l.lastWarn) < refusalLogEvery {
		l.mu.Unlock()
		return
	}
	n := l.unlogged
	l.lastWarn, l.unlogged = now, 0
	l.mu.Unlock()
	l.log.Warn("vesta: connection refused: too many connections from this address (maxConnsPerIP)",
		"remote", ip, "max", l.max, "refusedSinceLastWarning", n)
}

// remoteIP is the address without its port: the unit of the cap.
func remoteIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// jsonConn is a connection of limitListener: it gives its slot back when
// closed (once), and rewrites net/http's plain-text errors (plainToJSON).
type jsonConn struct {
	net.Conn
	release func()
	closed  atomic.Bool
}

func (c *jsonConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.release()
	}
	return c.Conn.Close()
}

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
