package rpcapi

import (
	"context"
	"io"
	"net"
	"net/rpc"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// deafPeer is a TCP connection to a peer that accepts and never reads,
// with small socket buffers so that a big request cannot be sent.
func deafPeer(t *testing.T) net.Conn {
	c, _ := deafPeerAfter(t, 0)
	return c
}

// deafPeerAfter is deafPeer whose peer first reads n bytes; began is
// closed once it has them, so a test knows that a send is under way.
func deafPeerAfter(t *testing.T, n int) (c net.Conn, began <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	read := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		accepted <- c
		if _, err := io.ReadFull(c, make([]byte, n)); err == nil {
			close(read)
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, nc.(*net.TCPConn).SetWriteBuffer(4096))
	peer := <-accepted
	t.Cleanup(func() { peer.Close() })
	return nc, read
}

// A send the peer does not read ends at the caller's deadline, breaks the
// connection, and a caller waiting for its turn to send keeps its own
// deadline.
func TestStuckSendEndsAtTheDeadline(t *testing.T) {
	nc, began := deafPeerAfter(t, 1)
	c := NewNetConn(nc, ServiceName)
	defer c.Close()
	start := time.Now()
	big := strings.Repeat("x", 1<<20) // far more than the 4 KiB socket buffers hold, quick to encode
	waiter := make(chan error, 1)
	var waited time.Duration
	go func() {
		// The peer has the big request's first byte: it holds the turn to
		// send, and cannot finish before its deadline.
		<-began
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		began := time.Now()
		_, err := c.GenId(ctx)
		waited = time.Since(began)
		waiter <- err
	}()
	const deadline = time.Second // far beyond the waiter's 50 ms
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, err := c.NextIds(ctx, big, 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), deadline+time.Second, "bounded by the deadline, not by the peer")
	assert.True(t, c.Broken(), "a half-written request leaves the stream unusable")
	assert.False(t, c.HeardSince(0), "nothing came back")
	// The waiter came while the big send held the turn and ends by its own
	// deadline, long before the big send's.
	werr := <-waiter
	assert.ErrorIs(t, werr, context.DeadlineExceeded, "the waiter timed out waiting for its turn")
	assert.Less(t, waited, 50*time.Millisecond+time.Second, "the waiter keeps its own deadline")

	_, err = c.GenId(context.Background())
	assert.ErrorIs(t, err, intf.ErrUnavailable, "a broken Conn takes no more calls")
	assert.ErrorIs(t, err, ErrBroken)
}

// A cancel ends a stuck send of a call with no deadline.
func TestStuckSendEndsOnCancel(t *testing.T) {
	nc, began := deafPeerAfter(t, 1)
	c := NewNetConn(nc, ServiceName)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	// Once the peer has the request's first byte, the 1 MB request is
	// being written and cannot fit the 4 KiB buffers: the cancel ends a
	// stuck send, however long encoding took on a loaded machine.
	go func() {
		<-began
		cancel()
	}()
	_, err := c.NextIds(ctx, strings.Repeat("x", 1<<20), 1)
	assert.ErrorIs(t, err, context.Canceled)
	assert.True(t, c.Broken())
}

// HeardSince sees replies; calls given up on pile up only to maxAbandoned on a
// peer that reads and never answers, then the Conn breaks, which frees
// them.
func TestHeardAndAbandonedCalls(t *testing.T) {
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(&recorder{deadline: make(chan bool, 10)}, 10)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewNetConn(b, ServiceName)
	defer c.Close()
	before := c.Reads()
	_, err := c.GenId(context.Background())
	require.NoError(t, err)
	assert.True(t, c.HeardSince(before))
	assert.False(t, c.HeardSince(c.Reads()))

	silent := NewNetConn(pipeToSilence(t), ServiceName)
	defer silent.Close()
	// A call whose context ends before it is sent is not abandoned, so
	// allow for some of those.
	for i := 0; i < 4*maxAbandoned && !silent.Broken(); i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Microsecond)
		_, err := silent.GenId(ctx)
		cancel()
		require.Error(t, err)
	}
	assert.True(t, silent.Broken(), "after %d calls given up on with nothing read", maxAbandoned)
}

// pipeToSilence is the client end of an in-memory connection whose other
// end reads everything and never writes.
func pipeToSilence(t *testing.T) net.Conn {
	a, b := net.Pipe()
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := a.Read(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { a.Close() })
	return b
}

// On TCP a send's write deadline is moved only when the one armed is later
// than the send's: a deadline armed for an earlier send fires early and
// the write goes on; the send's own deadline, and a cancel, end it.
func TestLazySendDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	peer, err := ln.Accept()
	require.NoError(t, err)
	defer peer.Close()
	n := NewNetConn(nc, ServiceName).nc
	defer n.Close()
	require.True(t, n.lazy)

	n.setSendDeadline(time.Now().Add(10 * time.Millisecond)) // an earlier send's
	armed := n.armed
	n.setSendDeadline(time.Now().Add(time.Hour))
	assert.Equal(t, armed, n.armed, "a later deadline is not armed")
	data := []byte(strings.Repeat("0123456789abcdef", 2<<20)) // 32 MB: more than the socket buffers
	read := make(chan int64, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // the write blocks past the armed deadline meanwhile
		k, _ := io.CopyN(io.Discard, peer, int64(len(data)))
		read <- k
	}()
	k, err := n.Write(data)
	require.NoError(t, err)
	assert.Equal(t, len(data), k)
	assert.Equal(t, int64(len(data)), <-read)

	n.setSendDeadline(time.Now().Add(30 * time.Millisecond))
	_, err = n.Write(data) // the peer reads no more
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "its own deadline passed")

	n.setSendDeadline(time.Time{})
	n.abortSend()
	_, err = n.Write(data)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "a cancel is not retried")
	n.setSendDeadline(time.Now().Add(time.Hour))
	assert.False(t, n.aborted.Load())
	assert.Equal(t, n.want, n.armed, "armed anew after a cancel")
}
