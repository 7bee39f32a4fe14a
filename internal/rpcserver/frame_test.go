package rpcserver

import (
	"bytes"
	"encoding/gob"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/ctxtime"
)

type msg struct {
	Name string
	N    int64
}

// pipeReader is a frameReader on one end of a pipe whose other end
// receives data, with the default limits.
func pipeReader(t *testing.T, data []byte) (*frameReader, *conn, *counters) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go func() { _, _ = b.Write(data) }()
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	c := newConn(a)
	ctr := new(counters)
	return newFrameReader(c, &o, ctr), c, ctr
}

func TestFrameReaderPassesGobThrough(t *testing.T) {
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	want := []msg{{"a", 1}, {strings.Repeat("x", 300), -7}, {"", 1 << 62}} // 300: a two-byte count
	for _, m := range want {
		require.NoError(t, enc.Encode(m))
	}
	r, _, _ := pipeReader(t, buf.Bytes())
	dec := gob.NewDecoder(r)
	for _, w := range want {
		r.startCall()
		var got msg
		require.NoError(t, dec.Decode(&got))
		assert.Equal(t, w, got)
	}
}

func TestFrameReaderRefusesBeforeTheBody(t *testing.T) {
	// gob's count of 8 GiB - 1 (-5, then 5 big-endian bytes), no body:
	// the refusal cannot wait for it.
	r, _, ctr := pipeReader(t, []byte{0xfb, 0x01, 0xff, 0xff, 0xff, 0xff})
	r.startCall()
	_, err := r.Read(make([]byte, 1))
	var big *MessageTooBigError
	require.ErrorAs(t, err, &big)
	assert.Equal(t, uint64(1<<33-1), big.Size)
	assert.Equal(t, uint64(DefaultMaxMessageBytes), big.Max)
	assert.Equal(t, uint64(1), ctr.tooBig.Load())
	_, again := r.Read(make([]byte, 1))
	assert.Equal(t, err, again, "the error sticks: the stream is lost")
}

func TestFrameReaderBadHeader(t *testing.T) {
	r, _, _ := pipeReader(t, []byte{0x80, 0})
	r.startCall()
	_, err := r.Read(make([]byte, 1))
	assert.ErrorIs(t, err, ErrBadHeader)
}

func TestStopIsNotUndoneByReads(t *testing.T) {
	r, c, ctr := pipeReader(t, nil)
	c.stop()
	assert.ErrorIs(t, c.setReadDeadline(time.Now().Add(time.Hour)), errStopping)
	r.startCall()
	_, err := r.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "a stopped connection reads no new call")
	assert.Zero(t, ctr.firstByteTimeouts.Load()+ctr.idleTimeouts.Load(), "a stop is not a timeout")
}

// tcpPair is a connected pair of TCP connections (a lazy conn, unlike a
// pipe).
func tcpPair(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	nc, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { peer.Close(); nc.Close() })
	c := newConn(nc)
	require.True(t, c.lazy())
	return c, peer
}

// A deadline armed for an earlier call fires early: the read is tried
// again, and fails only once its own deadline has passed.
func TestLazyReadDeadline(t *testing.T) {
	c, peer := tcpPair(t)
	sets, rearmed := 0, make(chan struct{})
	r := &deadlineReader{c: c, lazyDeadline: lazyDeadline{step: 10 * time.Millisecond,
		set: func(d time.Time) error { sets++; signalAt(sets, 2, rearmed); return c.setReadDeadline(d) }}}
	r.want = ctxtime.Monotonic() + time.Hour
	go func() {
		waitRearmed(rearmed)
		_, _ = peer.Write([]byte("x"))
	}()
	b := make([]byte, 1)
	n, err := r.Read(b)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Greater(t, sets, 1, "re-armed after an early timeout")

	r.want = ctxtime.Monotonic() + 30*time.Millisecond
	_, err = r.Read(b)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "its own deadline passed")

	c.stop()
	r.want = ctxtime.Monotonic() + time.Hour
	_, err = r.Read(b)
	assert.Error(t, err, "a stop is not retried")
}

// A write blocked past a deadline armed for an earlier reply goes on: it
// writes everything once the peer reads.
func TestLazyWriteDeadline(t *testing.T) {
	c, peer := tcpPair(t)
	sets, rearmed := 0, make(chan struct{})
	w := &deadlineWriter{c: c, lazyDeadline: lazyDeadline{step: 10 * time.Millisecond,
		set: func(d time.Time) error { sets++; signalAt(sets, 2, rearmed); return c.Conn.SetWriteDeadline(d) }}}
	w.want = ctxtime.Monotonic() + time.Hour
	data := bytes.Repeat([]byte("0123456789abcdef"), 2<<20) // 32 MB: more than the socket buffers
	read := make(chan int64, 1)
	go func() {
		waitRearmed(rearmed) // the writer blocks meanwhile
		n, _ := io.Copy(io.Discard, peer)
		read <- n
	}()
	n, err := w.Write(data)
	require.NoError(t, err)
	assert.Equal(t, len(data), n)
	assert.Greater(t, sets, 1, "re-armed after an early timeout")
	c.Conn.Close()
	assert.Equal(t, int64(len(data)), <-read)
}

// signalAt closes ch when n reaches at: the deadline was set again after an
// early timeout.
func signalAt(n, at int, ch chan struct{}) {
	if n == at {
		close(ch)
	}
}

// waitRearmed waits until the deadline was set again; after a minute it
// goes on anyway, so that a deadline never re-armed fails the test's
// assertion rather than hanging it.
func waitRearmed(ch <-chan struct{}) {
	select {
	case <-ch:
	case <-time.After(time.Minute):
	}
}
