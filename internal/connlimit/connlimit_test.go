package connlimit

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
)

// listen starts a Listener of at most perIP connections per address on a
// free loopback port; accepted connections are sent on the channel.
func listen(t *testing.T, perIP int, opts Options) (*Listener, <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := New(ln, perIP, opts)
	t.Cleanup(func() { l.Close() })
	got := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			got <- c
		}
	}()
	return l, got
}

// closedByPeer reports whether the server closed c (a read ends with EOF
// or a reset rather than waiting).
func closedByPeer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// One address holds at most perIP connections; the next is closed at
// accept and counted, another address is admitted, and a closed
// connection gives its slot back once however often it is closed.
func TestCapPerIP(t *testing.T) {
	var refused atomic.Int64
	l, got := listen(t, 2, Options{Refused: func() { refused.Add(1) }, Logger: slog.New(slog.DiscardHandler)})
	nettest.DialFrom(t, "127.0.0.1", l.Addr().String())
	nettest.DialFrom(t, "127.0.0.1", l.Addr().String())
	s1, s2 := <-got, <-got
	require.IsType(t, &Conn{}, s1)
	assert.Equal(t, 2, l.Held("127.0.0.1"))

	over := nettest.DialFrom(t, "127.0.0.1", l.Addr().String())
	assert.True(t, closedByPeer(over), "the third connection from 127.0.0.1 is closed")
	assert.EqualValues(t, 1, refused.Load())

	nettest.DialFrom(t, "127.0.0.2", l.Addr().String())
	s3 := <-got
	assert.Equal(t, 1, l.Held("127.0.0.2"), "another address is admitted")

	require.NoError(t, s1.Close())
	_ = s1.Close() // a second close frees nothing more
	assert.Equal(t, 1, l.Held("127.0.0.1"))
	nettest.DialFrom(t, "127.0.0.1", l.Addr().String())
	s4 := <-got
	assert.Equal(t, 2, l.Held("127.0.0.1"), "the freed slot is taken again")
	for _, c := range []net.Conn{s2, s3, s4} {
		require.NoError(t, c.Close())
	}
	assert.Zero(t, l.Held("127.0.0.1"))
	assert.Zero(t, l.Held("127.0.0.2"))
}

// A flood of refusals logs one warning per interval, with the count.
func TestRefusalsWarnOncePerInterval(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	var refused atomic.Int64
	l, got := listen(t, 1, Options{Logger: log, Name: "admin", Refused: func() { refused.Add(1) }})
	nettest.DialFrom(t, "127.0.0.1", l.Addr().String())
	<-got
	for range 5 {
		assert.True(t, closedByPeer(nettest.DialFrom(t, "127.0.0.1", l.Addr().String())))
	}
	require.Eventually(t, func() bool { return refused.Load() == 5 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, strings.Count(logs.String(), "too many connections from this address"), logs.String())
	assert.Contains(t, logs.String(), "listener=admin remote=127.0.0.1 maxConnsPerIP=1 maxConns=0 refusedSinceLastWarning=1")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// CloseWrite reaches the TCP connection: the peer reads EOF while the
// connection stays open for writing back.
func TestCloseWrite(t *testing.T) {
	l, got := listen(t, 1, Options{Logger: slog.New(slog.DiscardHandler)})
	c := nettest.DialFrom(t, "127.0.0.1", l.Addr().String())
	s := <-got
	require.NoError(t, s.(*Conn).CloseWrite())
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
	_, err = c.Write([]byte("x"))
	assert.NoError(t, err)
}
