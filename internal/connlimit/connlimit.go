// Package connlimit caps the connections a listener holds from one remote
// IP: one over the cap is closed at accept, before a byte of it is read,
// so that a single address cannot take every connection (and file
// descriptor, and goroutine) of the process. server-rest's port and
// server-rpc's admin listener use it; the RPC port has its own admission
// (rpcserver), which also evicts idle connections.
package connlimit

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// warnEvery spaces the warnings about refused connections, so that a flood
// of them cannot flood the log.
const warnEvery = 10 * time.Second

// Options are a Listener's optional parts.
type Options struct {
	// Refused is told of each connection closed at accept (a metric);
	// nil: nothing.
	Refused func()
	// Logger gets a warning at most every 10 s while connections are
	// refused, with their count; nil: slog.Default().
	Logger *slog.Logger
	// Name says which listener it is in the warning, e.g. "rest".
	Name string
}

// Listener is a net.Listener that admits at most Max connections from one
// remote IP at a time. Its connections are *Conn.
type Listener struct {
	net.Listener
	max  int
	opts Options

	mu       sync.Mutex
	perIP    map[string]int // only addresses that hold connections
	lastWarn time.Time
	unlogged int // refusals since the last warning
}

// New caps ln at perIP connections per remote IP; perIP < 1 means 1.
func New(ln net.Listener, perIP int, opts Options) *Listener {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Listener{Listener: ln, max: max(perIP, 1), opts: opts, perIP: map[string]int{}}
}

// Accept returns the next connection within the cap, closing those over it.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c.RemoteAddr())
		if l.admit(ip) {
			return &Conn{Conn: c, l: l, ip: ip}, nil
		}
		if l.opts.Refused != nil {
			l.opts.Refused() // before the close: whoever sees it closed sees it counted
		}
		_ = c.Close()
		l.warn(ip)
	}
}

// Held is the number of connections ip holds now.
func (l *Listener) Held(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.perIP[ip]
}

func (l *Listener) admit(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[ip] >= l.max {
		return false
	}
	l.perIP[ip]++
	return true
}

func (l *Listener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// warn logs a refusal at most once per warnEvery, with how many were
// refused since the last warning.
func (l *Listener) warn(ip string) {
	l.mu.Lock()
	l.unlogged++
	now := time.Now()
	if now.Sub(l.lastWarn) < warnEvery {
		l.mu.Unlock()
		return
	}
	n := l.unlogged
	l.lastWarn, l.unlogged = now, 0
	l.mu.Unlock()
	l.opts.Logger.Warn("vesta: connection refused: too many connections from this address (maxConnsPerIP)",
		"listener", l.opts.Name, "remote", ip, "max", l.max, "refusedSinceLastWarning", n)
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

// Conn is a connection a Listener admitted: closing it (once, whoever
// closes it) gives its slot back.
type Conn struct {
	net.Conn
	l      *Listener
	ip     string
	closed atomic.Bool
}

// Close closes the connection and frees its slot.
func (c *Conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.release(c.ip)
	}
	return c.Conn.Close()
}

// CloseWrite half-closes the connection when it can (net/http does after
// some of its error answers, so that the client reads them first).
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
