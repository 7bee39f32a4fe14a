package restserver

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/connlimit"
)

// A jsonConn keeps the layers under it from accept and tells them of its
// state: a connection serving a request is not evicted for a newcomer at
// maxConns, and one waiting for its next request is.
func TestJSONConnTellsItsLayers(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var refused atomic.Int32
	limiter := connlimit.New(connTimeouts.Listener(raw), 10, connlimit.Options{MaxConns: 1, Refused: func() { refused.Add(1) }})
	ln := jsonListener{limiter}
	defer ln.Close()
	addr := raw.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	accepted := make(chan net.Conn, 1)
	accept := func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}
	closed := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err != nil
	}

	first := dial()
	go accept()
	jc := (<-accepted).(*jsonConn)
	require.NotNil(t, jc.limited, "connlimit's layer found at accept")
	require.NotNil(t, jc.timed, "httptimeout's layer found at accept")
	require.True(t, jc.connState(http.StateActive), "serving a request")

	go accept()
	require.True(t, closed(dial()), "no room: the one connection is serving")
	require.Equal(t, int32(1), refused.Load())

	require.True(t, jc.connState(http.StateIdle), "waiting for its next request")
	dial()
	newcomer := <-accepted
	defer newcomer.Close()
	require.True(t, closed(first), "the waiting one made room")
}
