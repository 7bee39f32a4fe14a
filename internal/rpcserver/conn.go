package rpcserver

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/service/ctxtime"
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
	// call (idleMark of when it began waiting, larger is later); 0 while a
	// call is being read or after reading ended. Eviction picks the least.
	idleSince atomic.Uint64
	// started is set by the first byte of the first call: an evicted
	// connection that never sent one has nothing to answer and is closed
	// at once, its descriptor freed before the newcomer is served.
	started atomic.Bool

	mu       sync.Mutex
	stopping atomic.Bool // set by stop, under mu: reads may no longer move the deadline

	counted bool // in Server.live and Server.perIP; guarded by Server.mu
}

// idleMark is idleSince for a connection that began waiting at now (a
// ctxtime.Monotonic reading): the clock the read deadline is set from
// anyway, rather than a counter shared by every connection's reads.
func idleMark(now time.Duration) uint64 { return uint64(now) + 1 } // never 0

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
	if c.stopping.Load() {
		return errStopping
	}
	return c.Conn.SetReadDeadline(t)
}

// stop interrupts the blocked read and fails every later one: net/rpc
// then answers the calls it has read and closes the connection.
func (c *conn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopping.Store(true)
	_ = c.Conn.SetReadDeadline(time.Now())
}

func (c *conn) isStopping() bool { return c.stopping.Load() }

// lazyDeadline keeps one direction's deadline on the socket (armed) no
// later than the one its I/O must meet (want), without moving it for
// every call: moving a deadline is a runtime timer change, and the server
// did three per call. A deadline armed for an earlier call fires early:
// the read or write that timed out is tried again with the deadline
// re-armed, and fails only once want has passed. Re-arming goes at most
// step ahead (the least of the timeouts that use it), so that a deadline
// armed for one kind of wait is never later than the next kind's: it
// fires early at most once per step on a busy connection.
//
// Times are ctxtime.Monotonic readings. It is used by one goroutine at a
// time (the reading one, or the one writing replies).
type lazyDeadline struct {
	want, armed time.Duration // armed 0: none set yet
	step        time.Duration
	// exact arms want itself, early never: a TLS connection's state does
	// not survive a write timeout, nor its handshake a read timeout.
	exact bool
	set   func(time.Time) error
}

// ready arms the deadline when the armed one is too late (or, exact, not
// want).
func (d *lazyDeadline) ready() error {
	if d.armed == 0 || d.armed > d.want || (d.exact && d.armed != d.want) {
		return d.arm(ctxtime.Monotonic())
	}
	return nil
}

func (d *lazyDeadline) arm(now time.Duration) error {
	at := d.want
	if !d.exact {
		at = min(at, now+d.step)
	}
	if err := d.set(time.Now().Add(at - now)); err != nil {
		return err
	}
	d.armed = at
	return nil
}

// retry says whether I/O that failed with err timed out early (and
// re-arms the deadline): it may be tried again.
func (d *lazyDeadline) retry(err error) bool {
	if d.exact || !isTimeout(err) {
		return false
	}
	now := ctxtime.Monotonic()
	return now < d.want && d.arm(now) == nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lazy says whether c's deadlines may fire early (lazyDeadline): a plain
// TCP connection's reads and writes are tried again after a timeout.
func (c *conn) lazy() bool {
	_, ok := c.Conn.(*net.TCPConn)
	return ok
}

// deadlineReader is what the frameReader's buffer reads c through, with
// its read deadline; a stopped connection's timeout is not retried.
//
// The deadline counts from the first read of the socket a wait needs
// (waitFor), not from the wait's start: a call already in the buffer (a
// pipelined one, or the rest of one whose first byte came with it) reads
// no clock, and a wait that does read the socket begins then.
type deadlineReader struct {
	c *conn
	lazyDeadline
	wait time.Duration // the wait's timeout, from the first read of the socket
	idle bool          // the wait is for a call's first byte: c is idle while it reads
}

// waitFor starts a wait of at most d for what the buffer does not hold;
// idle says it is a wait for the next call.
func (r *deadlineReader) waitFor(d time.Duration, idle bool) {
	r.wait, r.want, r.idle = d, 0, idle
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	if r.want == 0 { // the wait's first read of the socket
		now := ctxtime.Monotonic()
		r.want = now + r.wait
		if r.idle {
			r.c.idleSince.Store(idleMark(now))
		}
	}
	for {
		if err := r.ready(); err != nil {
			return 0, err
		}
		n, err := r.c.Conn.Read(p)
		if n > 0 || err == nil || r.c.isStopping() || !r.retry(err) {
			return n, err
		}
	}
}

// deadlineWriter is what replies are written to c through, with its
// write deadline.
type deadlineWriter struct {
	c *conn
	lazyDeadline
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	written := 0
	for {
		if err := w.ready(); err != nil {
			return written, err
		}
		n, err := w.c.Conn.Write(p[written:])
		written += n
		if err == nil || !w.retry(err) {
			return written, err
		}
	}
}
