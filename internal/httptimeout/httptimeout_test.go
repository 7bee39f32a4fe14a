package httptimeout_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/httptimeout"
	"github.com/vesta-go/vesta/internal/nettest"
)

var timeouts = httptimeout.Timeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second,
	Idle: 2 * time.Minute}

// dial returns the client end of a new connection to pl's server.
func dial(t *testing.T, pl *nettest.PipeListener) net.Conn {
	t.Helper()
	c, err := pl.Dial()
	require.NoError(t, err)
	return c
}

// cutAt asserts that the server closes c d from now, not a millisecond
// before (what: which limit).
func cutAt(t *testing.T, c net.Conn, d time.Duration, what string) {
	t.Helper()
	time.Sleep(d - time.Millisecond)
	assert.False(t, closedByServer(t, c), "open a millisecond before: %s", what)
	time.Sleep(2 * time.Millisecond)
	assert.True(t, closedByServer(t, c), "closed a millisecond after: %s", what)
}

// connect runs an http.Server with h on a pipe listener (its deadlines on
// synctest's clock) held to timeouts, until the test's end, and returns
// the client end of one connection to it.
func connect(t *testing.T, h http.Handler) net.Conn {
	t.Helper()
	pl := nettest.NewPipeListener()
	hs := &http.Server{Handler: h, ConnState: httptimeout.ConnState}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(timeouts.Listener(pl))
	}()
	t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
	c := dial(t, pl)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") })

const get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

// roundTrip sends one request on c and reads its response's status.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader) int {
	t.Helper()
	_, err := io.WriteString(c, get)
	require.NoError(t, err)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// closedByServer reports whether the server closed c rather than left it
// waiting (synctest.Wait first, so that the server has done what it
// would).
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	synctest.Wait()
	if err := c.SetReadDeadline(time.Now()); errors.Is(err, io.ErrClosedPipe) {
		return true // a pipe says so when its other end is closed
	}
	_, err := c.Read(make([]byte, 1))
	require.NoError(t, c.SetReadDeadline(time.Time{}))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	require.ErrorIs(t, err, io.EOF)
	return true
}

// A client that sends part of its headers and stops is cut off
// ReadHeader after its first byte, not before.
func TestSlowHeadersAreCutAtReadHeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := connect(t, hello)
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		require.NoError(t, err)
		cutAt(t, c, timeouts.ReadHeader, "closed at ReadHeader")
	})
}

// The same on a keep-alive connection that waited longer than ReadHeader
// for its next request: the header clock starts at the request's first
// byte, whatever the socket's timer had armed for the wait.
func TestSlowHeadersAfterALongWaitAreCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := connect(t, hello)
		r := bufio.NewReader(c)
		assert.Equal(t, http.StatusOK, roundTrip(t, c, r))
		time.Sleep(time.Minute)
		assert.False(t, closedByServer(t, c), "idle below Idle")
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\n")
		require.NoError(t, err)
		cutAt(t, c, timeouts.ReadHeader, "ReadHeader after the first byte, not Idle after the wait")
	})
}

// A connection waiting for its next request is closed after Idle, not
// before.
func TestIdleConnectionIsClosedAtIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := connect(t, hello)
		r := bufio.NewReader(c)
		assert.Equal(t, http.StatusOK, roundTrip(t, c, r))
		cutAt(t, c, timeouts.Idle, "closed at Idle")
	})
}

// Requests spaced further apart than ReadHeader and Read, on one
// connection, for longer than Write: every one is answered (the timers
// armed for earlier requests fire, and what they woke is resumed).
func TestKeepAliveOutlivesEveryTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := connect(t, hello)
		r := bufio.NewReader(c)
		for i := range 12 {
			assert.Equal(t, http.StatusOK, roundTrip(t, c, r), "request %d", i)
			time.Sleep(11 * time.Second)
		}
	})
}

// A handler may run longer than ReadHeader (the request is read): its
// response is sent.
func TestSlowHandlerIsAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(8 * time.Second)
			_, _ = io.WriteString(w, "late")
		})
		c := connect(t, h)
		assert.Equal(t, http.StatusOK, roundTrip(t, c, bufio.NewReader(c)))
	})
}

// A client that does not read its response holds the handler's write at
// most Write after the request's first byte.
func TestUnreadResponseIsCutAtWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu       sync.Mutex
			writeErr error
			ended    time.Time
		)
		start := time.Now()
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			chunk := []byte(strings.Repeat("x", 64<<10))
			var err error
			for err == nil {
				_, err = w.Write(chunk)
			}
			mu.Lock()
			writeErr, ended = err, time.Now()
			mu.Unlock()
		})
		c := connect(t, h)
		_, err := io.WriteString(c, get)
		require.NoError(t, err)
		time.Sleep(timeouts.Write - time.Millisecond)
		synctest.Wait()
		mu.Lock()
		assert.NoError(t, writeErr, "still writing before Write")
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Error(t, writeErr, "the write failed at Write")
		assert.Equal(t, timeouts.Write, ended.Sub(start).Round(time.Millisecond))
	})
}

// A deadline the server's user sets that comes before the phase's holds:
// here a handler's own write deadline of 1 s.
func TestEarlierUserDeadlineHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu       sync.Mutex
			writeErr error
			took     time.Duration
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			start := time.Now()
			_ = http.NewResponseController(w).SetWriteDeadline(start.Add(time.Second))
			chunk := []byte(strings.Repeat("x", 64<<10))
			var err error
			for err == nil {
				_, err = w.Write(chunk)
			}
			mu.Lock()
			writeErr, took = err, time.Since(start)
			mu.Unlock()
		})
		c := connect(t, h)
		_, err := io.WriteString(c, get)
		require.NoError(t, err)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Error(t, writeErr)
		assert.Equal(t, time.Second, took)
	})
}

// A read deadline set in the past wakes a blocked read at once with a
// timeout (net/http stops its background read so), and clearing it lets
// the next read wait again.
func TestPastDeadlineWakesABlockedRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl := nettest.NewPipeListener()
		ln := timeouts.Listener(pl)
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				accepted <- c
			}
		}()
		client := dial(t, pl)
		defer client.Close()
		c := <-accepted
		defer c.Close()

		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			errc <- err
		}()
		synctest.Wait()
		require.NoError(t, c.SetReadDeadline(time.Unix(1, 0)))
		err := <-errc
		var ne net.Error
		require.ErrorAs(t, err, &ne, "the error net/http looks for")
		assert.True(t, ne.Timeout())

		require.NoError(t, c.SetReadDeadline(time.Time{}))
		go func() {
			_, err := c.Read(make([]byte, 1))
			errc <- err
		}()
		_, err = client.Write([]byte("x"))
		require.NoError(t, err)
		assert.NoError(t, <-errc)
	})
}
