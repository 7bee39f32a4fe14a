// Package httptimeout enforces an HTTP/1.1 server's read-header, read,
// write and idle timeouts on its connections, in place of http.Server's
// fields of the same names, for a fraction of their cost.
//
// http.Server turns its timeouts into about six socket deadlines per
// keep-alive request, each one a runtime timer inserted, moved or deleted
// under locks, and five clock reads: on a small request that is about a
// tenth of the server's CPU. Here the deadline of each direction follows
// the connection's phase (http.Server's ConnState hook and the first
// bytes of a request), and the socket's timer is moved only when a
// deadline comes earlier than the one it has: a later one waits until the
// timer fires, and the Read or Write it woke is resumed. A request costs
// two clock reads and re-arming the read timer after net/http's own
// deadline (it wakes its background read with one).
//
// A deadline never ends a call earlier than its timeout (the call is
// resumed) nor later (the socket's timer is never after it):
//
//   - a request's headers must arrive within ReadHeader of its first byte
//     (of the accept, for a new connection), and the whole request within
//     Read;
//   - its response must be written within Write of its first byte;
//   - a connection may wait for its next request for Idle.
//
// Wrap the bottom connection, under TLS (a tls.Conn cannot write again
// after a write timeout; a resumed one is never seen by it), and set
// Timeouts.ConnState as the http.Server's ConnState hook (or call it from
// yours).
package httptimeout

import (
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/vesta-go/vesta/internal/connwrap"
)

// Timeouts are the limits a connection is held to; 0 is none (Idle 0
// means Read, as in http.Server).
type Timeouts struct {
	ReadHeader time.Duration
	Read       time.Duration
	Write      time.Duration
	Idle       time.Duration
}

// Listener enforces t on every connection of ln.
func (t Timeouts) Listener(ln net.Listener) net.Listener {
	if t.Idle == 0 {
		t.Idle = t.Read
	}
	if t.ReadHeader == 0 {
		t.ReadHeader = t.Read
	}
	return &listener{Listener: ln, t: t, base: time.Now()}
}

type listener struct {
	net.Listener
	t    Timeouts
	base time.Time // the clock's zero: deadlines are offsets from it (monotonic)
}

func (l *listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &Conn{Conn: nc, l: l, read: unset, write: unset}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.beginRequestLocked(l.now())
	return c, nil
}

// now is the time since l.base (one monotonic clock read).
func (l *listener) now() time.Duration { return time.Since(l.base) }

// ConnState is the http.Server ConnState hook that tells each connection
// its phase.
func ConnState(nc net.Conn, st http.ConnState) {
	if c, ok := connwrap.Find[*Conn](nc); ok {
		c.ConnState(st)
	}
}

// ConnState is the package's ConnState for c, found already: a server
// that keeps its connections' layers from accept walks no wrappers per
// request.
func (c *Conn) ConnState(st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateActive:
		c.phase = active
	case http.StateIdle:
		c.phase, c.since = idle, c.l.now()
	case http.StateHijacked, http.StateClosed:
		c.phase = off
	default:
		return
	}
	c.updateLocked()
}

// phase is where a connection is in its request cycle.
type phase uint8

const (
	header phase = iota // reading a request's headers, since its first byte
	active              // serving it: headers read
	idle                // waiting for the next request
	off                 // hijacked or closed: no phase deadline
)

// none is a deadline that never comes.
const none = time.Duration(1<<63 - 1)

// Conn is a connection held to its listener's Timeouts.
type Conn struct {
	net.Conn
	l *listener

	mu    sync.Mutex
	phase phase
	since time.Duration // start of the request (header, active) or of the wait (idle)
	read  side
	write side
}

// side is one direction's deadlines, offsets from the listener's base:
// the one the phase asks for, the one the connection's user set
// (net/http, a TLS handshake: none unless set), and the one the socket
// has (armed), never after the earlier of the two. stale means the armed
// one was in the past when armed (net/http stopping a read): it is
// re-armed before the next call.
type side struct {
	phase, user, armed time.Duration
	stale              bool
}

// unset is a side with no deadline.
var unset = side{phase: none, user: none, armed: none}

// wanted is the deadline the direction is held to.
func (s *side) wanted() time.Duration { return min(s.phase, s.user) }

// beginRequestLocked starts a request's header phase at now.
func (c *Conn) beginRequestLocked(now time.Duration) {
	c.phase, c.since = header, now
	c.updateLocked()
}

// updateLocked sets the phase deadlines of c's phase, arming one that
// comes earlier than its socket's.
func (c *Conn) updateLocked() {
	t := &c.l.t
	c.read.phase, c.write.phase = none, none
	switch c.phase {
	case header:
		c.read.phase = after(c.since, t.ReadHeader)
		c.write.phase = after(c.since, t.Write)
	case active:
		c.read.phase = after(c.since, t.Read)
		c.write.phase = after(c.since, t.Write)
	case idle:
		c.read.phase = after(c.since, t.Idle)
	}
	c.tightenLocked(&c.read, c.Conn.SetReadDeadline)
	c.tightenLocked(&c.write, c.Conn.SetWriteDeadline)
}

// after is start+d, none when d is 0.
func after(start, d time.Duration) time.Duration {
	if d <= 0 {
		return none
	}
	return start + d
}

// tightenLocked arms s's wanted deadline when it comes before the armed
// one; a later one waits (premature expiries are resumed).
func (c *Conn) tightenLocked(s *side, arm func(time.Time) error) error {
	if w := s.wanted(); w < s.armed {
		return c.armLocked(s, w, arm)
	}
	return nil
}

// armLocked gives the socket deadline d.
func (c *Conn) armLocked(s *side, d time.Duration, arm func(time.Time) error) error {
	t := time.Time{}
	if d != none {
		t = c.l.base.Add(d)
	}
	s.armed, s.stale = d, false
	return arm(t)
}

// setUser records a deadline the connection's user set: the zero time
// is none, a time before the listener's base is in the past.
func (c *Conn) setUser(s *side, t time.Time, arm func(time.Time) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case t.IsZero():
		s.user = none
	case t.Before(c.l.base):
		s.user = -1 // the past: a call returns at once
	default:
		s.user = t.Sub(c.l.base)
	}
	if s.armed < 0 && s.wanted() >= 0 {
		s.stale = true // armed in the past: re-arm before the next call
	}
	return c.tightenLocked(s, arm)
}

// readyLocked re-arms a stale side before a call, with its wanted
// deadline; waiting idle, with the earlier of it and the next request's
// header deadline, so that the request's first bytes need no re-arming.
func (c *Conn) readyLocked(s *side, arm func(time.Time) error) error {
	if !s.stale {
		return nil
	}
	d := s.wanted()
	if s == &c.read && c.phase == idle {
		d = min(d, after(c.since, c.l.t.ReadHeader))
	}
	return c.armLocked(s, d, arm)
}

// expiredLocked reports, after a call on s timed out, whether s's wanted
// deadline has passed. When it has not (the socket's came first), it arms
// the wanted one and the caller resumes.
func (c *Conn) expiredLocked(s *side, arm func(time.Time) error) (bool, error) {
	w := s.wanted()
	if w < 0 || c.l.now() >= w {
		return true, nil
	}
	if err := c.armLocked(s, w, arm); err != nil {
		return true, err
	}
	return false, nil
}

// Read reads into p within the read deadline. The first bytes of a
// request, after a wait, start its header phase.
func (c *Conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	err := c.readyLocked(&c.read, c.Conn.SetReadDeadline)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	for {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.mu.Lock()
			if c.phase == idle {
				c.beginRequestLocked(c.l.now())
			}
			c.mu.Unlock()
			return n, err
		}
		if err == nil || !timedOut(err) {
			return n, err
		}
		c.mu.Lock()
		done, aerr := c.expiredLocked(&c.read, c.Conn.SetReadDeadline)
		c.mu.Unlock()
		if done {
			return n, joinArm(err, aerr)
		}
	}
}

// Write writes p within the write deadline, resumed where it stopped
// when the socket's deadline came first.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	err := c.readyLocked(&c.write, c.Conn.SetWriteDeadline)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	written := 0
	for {
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil || !timedOut(err) {
			return written, err
		}
		c.mu.Lock()
		done, aerr := c.expiredLocked(&c.write, c.Conn.SetWriteDeadline)
		c.mu.Unlock()
		if done {
			return written, joinArm(err, aerr)
		}
	}
}

// timedOut reports whether err is a deadline's expiry.
func timedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// joinArm is the timeout err unchanged (callers look for a net.Error),
// or with the error of arming the wanted deadline when that failed.
func joinArm(err, armErr error) error {
	if armErr == nil {
		return err
	}
	return errors.Join(err, armErr)
}

// SetDeadline sets the read and write deadlines, on top of the phase's.
func (c *Conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// SetReadDeadline sets a read deadline on top of the phase's: the
// earlier of the two holds.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.setUser(&c.read, t, c.Conn.SetReadDeadline)
}

// SetWriteDeadline sets a write deadline on top of the phase's: the
// earlier of the two holds.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.setUser(&c.write, t, c.Conn.SetWriteDeadline)
}

// NetConn is the connection under c.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the connection when the one under it can.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
