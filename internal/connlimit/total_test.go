package connlimit

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
)

// serveHTTP serves h on a Listener with opts, reporting states to it.
func serveHTTP(t *testing.T, perIP int, opts Options, h http.Handler) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := New(ln, perIP, opts)
	hs := &http.Server{Handler: h, ConnState: l.ConnState, ReadHeaderTimeout: time.Minute}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { hs.Close() })
	return l
}

// get sends one request on c and reads its status line.
func get(t *testing.T, c net.Conn, path string) string {
	t.Helper()
	_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	return line
}

// At the total cap a newcomer evicts the connection idle the longest —
// one that never sent a request, or a keep-alive between requests — and
// never one serving a request; with none idle it is refused.
func TestTotalCapEvictsTheLongestIdle(t *testing.T) {
	var refused, evicted atomic.Int64
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	l := serveHTTP(t, 100, Options{MaxConns: 3, Logger: slog.New(slog.DiscardHandler),
		Refused: func() { refused.Add(1) }, Evicted: func() { evicted.Add(1) }}, h)
	addr := l.Addr().String()

	silent := nettest.DialFrom(t, "127.0.0.1", addr) // never sends a byte
	require.Eventually(t, func() bool { return l.Live() == 1 }, 10*time.Second, time.Millisecond)
	keepAlive := nettest.DialFrom(t, "127.0.0.2", addr)
	assert.Equal(t, "HTTP/1.1 200 OK\r\n", get(t, keepAlive, "/"))
	busy := nettest.DialFrom(t, "127.0.0.3", addr)
	_, err := io.WriteString(busy, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return l.Live() == 3 && idleOf(l, "127.0.0.1") == 1 && idleOf(l, "127.0.0.2") == 1 && idleOf(l, "127.0.0.3") == 0
	}, 10*time.Second, time.Millisecond, "silent and keepAlive wait for a request, busy serves one")

	// Full: the silent one goes first, then the keep-alive.
	a := nettest.DialFrom(t, "127.0.0.4", addr)
	assert.True(t, closedByPeer(silent), "the longest idle is evicted")
	assert.Equal(t, "HTTP/1.1 200 OK\r\n", get(t, a, "/"), "the newcomer is served")
	require.Eventually(t, func() bool { return idleOf(l, "127.0.0.4") == 1 }, 10*time.Second, time.Millisecond, "a idle")
	b := nettest.DialFrom(t, "127.0.0.5", addr)
	assert.True(t, closedByPeer(keepAlive))
	assert.Equal(t, "HTTP/1.1 200 OK\r\n", get(t, b, "/"))
	require.Eventually(t, func() bool { return idleOf(l, "127.0.0.5") == 1 }, 10*time.Second, time.Millisecond, "b idle")
	assert.Equal(t, int64(2), evicted.Load())

	// Now a and b are idle keep-alives: a (idle longer) goes next.
	c := nettest.DialFrom(t, "127.0.0.6", addr)
	assert.True(t, closedByPeer(a))
	// Make every held connection busy: a newcomer is refused.
	_, err = io.WriteString(b, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	_, err = io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return idleLen(l) == 0 }, 10*time.Second, time.Millisecond)
	assert.True(t, closedByPeer(nettest.DialFrom(t, "127.0.0.7", addr)), "none idle: refused")
	assert.Equal(t, int64(1), refused.Load())
	assert.Equal(t, 3, l.Live())
	close(release)
	require.NoError(t, busy.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := bufio.NewReader(busy).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 200 OK\r\n", line, "the busy one was never evicted")
}

func idleLen(l *Listener) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.perIP {
		n += a.idle.len()
	}
	return n
}

// At the cap the address holding the most connections pays: its longest
// idle one goes, not an older one of a client holding a single one.
func TestTotalCapEvictsFromTheHeaviestAddress(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	l := serveHTTP(t, 100, Options{MaxConns: 4, Logger: slog.New(slog.DiscardHandler)}, h)
	addr := l.Addr().String()
	client := nettest.DialFrom(t, "127.0.0.2", addr) // the oldest idle
	require.Eventually(t, func() bool { return l.Live() == 1 }, 10*time.Second, time.Millisecond)
	var flood []net.Conn
	for range 3 {
		flood = append(flood, nettest.DialFrom(t, "127.0.0.3", addr))
	}
	require.Eventually(t, func() bool { return l.Live() == 4 }, 10*time.Second, time.Millisecond)
	for range 3 {
		nettest.DialFrom(t, "127.0.0.4", addr)
		require.Eventually(t, func() bool { return l.Held("127.0.0.4") > 0 }, 10*time.Second, time.Millisecond)
	}
	assert.True(t, closedByPeer(flood[0]), "the heaviest address's longest idle goes first")
	assert.Equal(t, 1, l.Held("127.0.0.2"), "the single client stays")
	assert.Equal(t, "HTTP/1.1 200 OK\r\n", get(t, client, "/"))
}

func idleOf(l *Listener, ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.perIP[ip]; a != nil {
		return a.idle.len()
	}
	return 0
}

// wrapper is a connection over another that exposes it, as tls.Conn does,
// and whose own Close would block.
type wrapper struct {
	net.Conn
	closed bool
}

func (w *wrapper) NetConn() net.Conn { return w.Conn }
func (w *wrapper) Close() error      { w.closed = true; select {} }

// CloseSocket closes the socket at the bottom, never a wrapper's Close
// (tls.Conn's writes an alert first).
func TestCloseSocketClosesTheBottom(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	w := &wrapper{Conn: a}
	CloseSocket(&wrapper{Conn: w})
	assert.False(t, w.closed)
	_, err := a.Write([]byte("x"))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "the bottom is closed")
}

// len counts the connections on q.
func (q *idleList) len() int {
	n := 0
	for c := q.head; c != nil; c = c.next {
		n++
	}
	return n
}

// The idle list keeps its order through removals from anywhere in it.
func TestIdleListOrder(t *testing.T) {
	var q idleList
	a, b, c := &Conn{}, &Conn{}, &Conn{}
	order := func() []*Conn {
		var got []*Conn
		for x := q.head; x != nil; x = x.next {
			got = append(got, x)
		}
		return got
	}
	q.pushBack(a)
	q.pushBack(b)
	q.pushBack(c)
	assert.Equal(t, []*Conn{a, b, c}, order())
	q.remove(b)
	assert.Equal(t, []*Conn{a, c}, order())
	q.pushBack(b)
	q.remove(a)
	assert.Equal(t, []*Conn{c, b}, order())
	assert.Same(t, b, q.tail)
	q.remove(b)
	q.remove(c)
	assert.Nil(t, q.head)
	assert.Nil(t, q.tail)
}
