// Package connlimit bounds the connections an HTTP listener holds: at most
// a number from one remote IP, and at most a total, a connection over
// either closed at accept before a byte of it is read. At the total, a
// connection waiting for a request (an idle keep-alive, or one that never
// sent a whole request) is closed to make room: the longest idle of the
// address holding the most connections, so that a flood from a few
// addresses evicts its own connections, not a client's one or two. A
// flood of idle connections costs its senders their connections, never the
// server's descriptors. server-rest's port and server-rpc's admin
// listener use it; the RPC port has the same rules in rpcserver.
package connlimit

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/connwrap"
)

// warnEvery spaces the warnings about refused connections, so that a flood
// of them cannot flood the log.
const warnEvery = 10 * time.Second

// Options are a Listener's optional parts.
type Options struct {
	// MaxConns caps the connections held at once (0: no total cap); a
	// newcomer over it evicts the longest-idle connection, or is closed
	// when none is idle. The HTTP server must report its connections'
	// states (ConnState) for idle ones to be known.
	MaxConns int
	// Refused is told of each connection closed at accept (a metric);
	// Evicted of each idle one closed for a newcomer. nil: nothing.
	Refused, Evicted func()
	// Logger gets a warning at most every 10 s while connections are
	// refused, with their count; nil: slog.Default().
	Logger *slog.Logger
	// Name says which listener it is in the warning, e.g. "rest".
	Name string
}

// Listener is a net.Listener that admits at most perIP connections from
// one remote IP and Options.MaxConns in all. Its connections are *Conn.
type Listener struct {
	net.Listener
	max  int
	opts Options

	mu       sync.Mutex
	perIP    map[string]*address // only addresses that hold connections
	live     int
	idleSeq  uint64 // orders idle connections: larger is later
	lastWarn time.Time
	unlogged int // refusals since the last warning
}

// New caps ln at perIP connections per remote IP (perIP < 1 means 1) and
// opts.MaxConns in all.
func New(ln net.Listener, perIP int, opts Options) *Listener {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Listener{Listener: ln, max: max(perIP, 1), opts: opts, perIP: map[string]*address{}}
}

// address is what one remote IP holds.
type address struct {
	held int
	idle idleList // the connections waiting for a request, longest-idle first
}

// idleList is a list whose links are in its connections, so that filing
// one (twice a request) allocates nothing.
type idleList struct{ head, tail *Conn }

func (q *idleList) pushBack(c *Conn) {
	c.prev, c.next = q.tail, nil
	if q.tail != nil {
		q.tail.next = c
	} else {
		q.head = c
	}
	q.tail = c
}

func (q *idleList) remove(c *Conn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.tail = c.prev
	}
	c.prev, c.next = nil, nil
}

// Accept returns the next connection within the caps, closing those over
// them.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &Conn{Conn: c, l: l, ip: remoteIP(c.RemoteAddr())}
		ok, victim, reason := l.admit(cc)
		if victim != nil {
			victim.evict()
			if l.opts.Evicted != nil {
				l.opts.Evicted()
			}
		}
		if ok {
			return cc, nil
		}
		if l.opts.Refused != nil {
			l.opts.Refused() // before the close: whoever sees it closed sees it counted
		}
		_ = c.Close()
		l.warn(cc.ip, reason)
	}
}

// Held is the number of connections ip holds now.
func (l *Listener) Held(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.perIP[ip]; a != nil {
		return a.held
	}
	return 0
}

// Live is the number of connections held now.
func (l *Listener) Live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live
}

// admit counts c in when the caps allow, choosing an idle victim to evict
// at the total cap; a new connection counts as idle until its first
// request.
func (l *Listener) admit(c *Conn) (ok bool, victim *Conn, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.perIP[c.ip]
	if a != nil && a.held >= l.max {
		return false, nil, "too many connections from this address (maxConnsPerIP)"
	}
	if l.opts.MaxConns > 0 && l.live >= l.opts.MaxConns {
		if victim = l.victimLocked(); victim == nil {
			return false, nil, "too many connections, none idle (maxConns)"
		}
		l.releaseLocked(victim)
	}
	if a = l.perIP[c.ip]; a == nil {
		a = &address{}
		l.perIP[c.ip] = a
	}
	a.held++
	l.live++
	c.counted, c.addr = true, a
	l.idleLocked(c)
	return true, victim, ""
}

// victimLocked is the connection to evict for a newcomer: the longest
// idle of the address holding the most connections (of those with one
// idle); nil when none is idle. A scan of the addresses: it runs only at
// the cap.
func (l *Listener) victimLocked() *Conn {
	var best *Conn
	bestHeld := 0
	for _, a := range l.perIP {
		c := a.idle.head
		if c == nil {
			continue
		}
		if best == nil || EvictBefore(a.held, c.idleSince, bestHeld, best.idleSince) {
			best, bestHeld = c, a.held
		}
	}
	return best
}

// EvictBefore is the eviction rule of every listener (rpcserver's too):
// an idle connection whose address holds held connections, idle since seq
// (smaller is earlier), goes before one whose address holds bestHeld,
// idle since bestSeq — the heavier address first, then the longer idle.
func EvictBefore(held int, seq uint64, bestHeld int, bestSeq uint64) bool {
	return held > bestHeld || (held == bestHeld && seq < bestSeq)
}

// idleLocked files c as waiting for a request.
func (l *Listener) idleLocked(c *Conn) {
	if !c.idle {
		l.idleSeq++
		c.idleSince, c.idle = l.idleSeq, true
		c.addr.idle.pushBack(c)
	}
}

// busyLocked files c as serving a request.
func (l *Listener) busyLocked(c *Conn) {
	if c.idle {
		c.addr.idle.remove(c)
		c.idle = false
	}
}

// releaseLocked stops counting c: at its close, or when it is evicted
// (before its close, so that the newcomer takes the slot at once).
func (l *Listener) releaseLocked(c *Conn) {
	if !c.counted {
		return
	}
	c.counted = false
	l.live--
	l.busyLocked(c)
	if c.addr.held--; c.addr.held <= 0 {
		delete(l.perIP, c.ip)
	}
}

// ConnState is the http.Server's ConnState hook: it tells the listener
// which connections wait for a request (new and idle ones), which it may
// evict, and which are serving one, which it leaves alone.
func (l *Listener) ConnState(nc net.Conn, st http.ConnState) {
	if c, ok := connwrap.Find[*Conn](nc); ok {
		c.ConnState(st)
	}
}

// ConnState is Listener.ConnState for c, found already: a server that
// keeps its connections' layers from accept walks no wrappers per request.
func (c *Conn) ConnState(st http.ConnState) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.counted {
		return
	}
	switch st {
	case http.StateIdle:
		l.idleLocked(c)
	case http.StateActive, http.StateHijacked:
		l.busyLocked(c)
	}
}

// warn logs a refusal at most once per warnEvery, with how many were
// refused since the last warning.
func (l *Listener) warn(ip, reason string) {
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
	l.opts.Logger.Warn("vesta: connection refused: "+reason,
		"listener", l.opts.Name, "remote", ip, "maxConnsPerIP", l.max, "maxConns", l.opts.MaxConns, "refusedSinceLastWarning", n)
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
	// Guarded by l.mu: counted against the caps, for addr; idle (in
	// addr's idle list, linked by prev and next) while the connection
	// waits for a request, since idleSince.
	counted    bool
	addr       *address
	idle       bool
	prev, next *Conn
	idleSince  uint64
}

// Close closes the connection and frees its slot.
func (c *Conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.mu.Lock()
		c.l.releaseLocked(c)
		c.l.mu.Unlock()
	}
	return c.Conn.Close()
}

// evict closes an evicted connection at once (CloseSocket); the server's
// own Close of c comes later and only fails.
func (c *Conn) evict() {
	c.closed.Store(true) // its slot is released already
	CloseSocket(c.Conn)
}

// CloseSocket closes the socket at the bottom of nc, under TLS and other
// wrappers that expose NetConn, freeing its descriptor at once: an evicted
// connection's tls.Conn.Close would first write an alert, which a peer
// that reads nothing could hold up to 5 s in the accept loop.
func CloseSocket(nc net.Conn) { _ = connwrap.Innermost(nc).Close() }

// NetConn is the connection under c.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the connection when it can (net/http does after
// some of its error answers, so that the client reads them first).
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
