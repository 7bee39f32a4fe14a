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
	var seq uint64
	return newFrameReader(c, &o, ctr, func() uint64 { seq++; return seq }), c, ctr
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
