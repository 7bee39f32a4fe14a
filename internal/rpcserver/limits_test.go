package rpcserver_test

import (
	"context"
	"encoding/gob"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
)

// attacker is the address the hostile connections come from; the
// legitimate client dials from 127.0.0.1. Linux routes all of 127/8 to
// loopback.
const attacker = "127.0.0.2"

// waitClosed waits for the server to close c (EOF or a reset); the
// deadline only keeps a failing test from hanging.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	_, err := io.Copy(io.Discard, c)
	if err != nil {
		require.True(t, errors.Is(err, syscall.ECONNRESET), "closed by the server, not %v", err)
	}
}

func eventually(t *testing.T, what string, f func(rpcserver.Stats) bool, srv *rpcserver.Server) {
	t.Helper()
	require.Eventually(t, func() bool { return f(srv.Stats()) }, 20*time.Second, 5*time.Millisecond,
		"%s; stats %+v", what, srv.Stats())
}

func genId(t *testing.T, c *rpc.Client) {
	t.Helper()
	var r rpcapi.GenIdReply
	require.NoError(t, c.Call("IdService.GenId", rpcapi.GenIdArgs{}, &r))
	require.Nil(t, r.Err)
}

func TestPerIPLimit(t *testing.T) {
	var logs syncbuf.Buffer
	srv := rpctest.Start(t, rpctest.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Options: rpcserver.Options{MaxConnsPerIP: 3}})
	for i := range 3 {
		nettest.DialFrom(t, attacker, srv.Addr)
		eventually(t, "accepted", func(s rpcserver.Stats) bool { return s.Accepted == uint64(i+1) }, srv.RPC)
	}
	// More from that address are closed at once, with one warning a
	// second, not one per connection.
	for range 20 {
		waitClosed(t, nettest.DialFrom(t, attacker, srv.Addr))
	}
	st := srv.RPC.Stats()
	assert.Equal(t, uint64(20), st.RefusedPerIP)
	assert.Equal(t, uint64(20), st.Refused)
	warnings := strings.Count(logs.String(), "connection refused: too many connections from this address")
	assert.GreaterOrEqual(t, warnings, 1)
	assert.LessOrEqual(t, warnings, 3, "one warning a second, not one per refusal (20): %s", logs.String())

	// Another address is served.
	genId(t, dial(t, srv.Addr))
	assert.Equal(t, uint64(4), srv.RPC.Stats().Open)
}

// When the server is full, a newcomer takes the place of the connection
// idle the longest.
func TestEvictsTheLongestIdle(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{MaxConns: 3, Options: rpcserver.Options{MaxConnsPerIP: 100}})
	var idle []net.Conn
	for i := range 3 {
		idle = append(idle, nettest.DialFrom(t, attacker, srv.Addr))
		eventually(t, "accepted", func(s rpcserver.Stats) bool { return s.Accepted == uint64(i+1) }, srv.RPC)
	}
	genId(t, dial(t, srv.Addr))
	waitClosed(t, idle[0])
	st := srv.RPC.Stats()
	assert.Equal(t, uint64(1), st.Evicted)
	assert.Zero(t, st.Refused)

	// The others were not touched: a second newcomer evicts the next one.
	genId(t, dial(t, srv.Addr))
	waitClosed(t, idle[1])
	assert.Equal(t, uint64(2), srv.RPC.Stats().Evicted)
}

// A newcomer is refused only when every connection is reading a call.
func TestRefusedWhenNoneIsIdle(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{MaxConns: 2, Options: rpcserver.Options{MaxConnsPerIP: 100}})
	for range 2 {
		c := nettest.DialFrom(t, attacker, srv.Addr)
		_, err := c.Write([]byte{0x10, 0}) // 1 of a 16-byte message
		require.NoError(t, err)
	}
	eventually(t, "both reading a call", func(s rpcserver.Stats) bool { return s.Open == 2 && s.Idle == 0 }, srv.RPC)
	waitClosed(t, nettest.DialFrom(t, attacker, srv.Addr))
	st := srv.RPC.Stats()
	assert.Equal(t, uint64(1), st.RefusedFull)
	assert.Zero(t, st.Evicted)
}

func TestFirstByteTimeout(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Options: rpcserver.Options{FirstByteTimeout: 50 * time.Millisecond}})
	waitClosed(t, nettest.DialFrom(t, attacker, srv.Addr))
	eventually(t, "counted", func(s rpcserver.Stats) bool { return s.FirstByteTimeouts == 1 }, srv.RPC)
}

func TestIdleTimeout(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Options: rpcserver.Options{IdleTimeout: 100 * time.Millisecond}})
	c := dial(t, srv.Addr)
	genId(t, c)
	eventually(t, "closed when idle", func(s rpcserver.Stats) bool { return s.IdleTimeouts == 1 && s.Open == 0 }, srv.RPC)
	var r rpcapi.GenIdReply
	assert.Error(t, c.Call("IdService.GenId", rpcapi.GenIdArgs{}, &r))
	assert.Zero(t, srv.RPC.Stats().FirstByteTimeouts)
}

func TestSlowWriter(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Options: rpcserver.Options{MessageTimeout: 100 * time.Millisecond}})
	c := nettest.DialFrom(t, attacker, srv.Addr)
	_, err := c.Write([]byte{0x10, 0}) // 1 of a 16-byte message, and no more
	require.NoError(t, err)
	waitClosed(t, c)
	eventually(t, "counted", func(s rpcserver.Stats) bool { return s.MessageTimeouts == 1 }, srv.RPC)
}

func TestMessageTooBig(t *testing.T) {
	var logs syncbuf.Buffer
	srv := rpctest.Start(t, rpctest.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Options: rpcserver.Options{MaxMessageBytes: 1024}})

	// A header claiming 8 GiB - 1: closed without reading on.
	c := nettest.DialFrom(t, attacker, srv.Addr)
	_, err := c.Write(append([]byte{0xfb, 0x01, 0xff, 0xff, 0xff, 0xff}, make([]byte, 64<<10)...))
	_ = err // a reset may come before all of it is written
	waitClosed(t, c)
	eventually(t, "counted", func(s rpcserver.Stats) bool { return s.TooBig == 1 && s.Open == 0 }, srv.RPC)
	// The warning is written as the connection ends, just after the count.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "message too big") }, 10*time.Second, time.Millisecond,
		"the too-big message is logged")

	// A real call over the limit gets an error naming it, and its
	// connection is closed.
	rc := dial(t, srv.Addr)
	var r rpcapi.SegmentReply
	err = rc.Call("IdService.SegmentNextIds", rpcapi.SegmentArgs{Tag: strings.Repeat("t", 2000), Count: 1}, &r)
	assert.ErrorContains(t, err, "over the limit of 1024")
	eventually(t, "closed", func(s rpcserver.Stats) bool { return s.TooBig == 2 && s.Open == 0 }, srv.RPC)
	genId(t, dial(t, srv.Addr))
}

// big is an IdService whose batches are quick and large on the wire.
type big struct{ intf.IdService }

func (big) GenIds(_ context.Context, n int) ([]intf.Id, error) {
	ids := make([]intf.Id, n)
	for i := range ids {
		ids[i] = 1<<62 + intf.Id(i)
	}
	return ids, nil
}

// A client that sends calls and never reads the replies holds the server
// for WriteTimeout, then is closed.
func TestWriteTimeout(t *testing.T) {
	srv, err := rpcserver.New(rpcapi.NewReceiver(big{}, 10_000), rpcserver.Options{
		WriteTimeout: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		assert.NoError(t, srv.Shutdown(context.Background()))
		<-served
	})

	c := nettest.DialFrom(t, attacker, ln.Addr().String())
	enc := gob.NewEncoder(c)
	for i := range 400 { // ~36 MB of replies: more than the socket buffers hold
		if enc.Encode(&rpc.Request{ServiceMethod: "IdService.GenIds", Seq: uint64(i)}) != nil ||
			enc.Encode(rpcapi.GenIdsArgs{Count: 10_000}) != nil {
			break // closed already
		}
	}
	eventually(t, "closed", func(s rpcserver.Stats) bool { return s.WriteTimeouts >= 1 && s.Open == 0 }, srv)
}

// Shutdown ends connections idle or in the middle of a call at once,
// whatever their timeouts.
func TestShutdownEndsIdleAndSlowConns(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Options: rpcserver.Options{IdleTimeout: time.Hour, MessageTimeout: time.Hour}})
	genId(t, dial(t, srv.Addr))
	slow := nettest.DialFrom(t, attacker, srv.Addr)
	_, err := slow.Write([]byte{0x10, 0})
	require.NoError(t, err)
	eventually(t, "open", func(s rpcserver.Stats) bool { return s.Open == 2 && s.Idle == 1 }, srv.RPC)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.RPC.Shutdown(ctx))
	waitClosed(t, slow)
	assert.Zero(t, srv.RPC.Stats().MessageTimeouts+srv.RPC.Stats().IdleTimeouts, "a shutdown is not a timeout")
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []rpcserver.Options{
		{MaxConns: -1}, {MaxConnsPerIP: -1}, {MaxMessageBytes: -1}, {MaxMessageBytes: 100},
		{FirstByteTimeout: -1}, {IdleTimeout: -1}, {MessageTimeout: -1}, {WriteTimeout: -1},
	} {
		_, err := rpcserver.New(rpcapi.NewReceiver(&gate{}, 1), o)
		assert.Error(t, err, "%+v", o)
	}
}

// counting is an IdService whose GenIds counts the calls in it and waits
// for release.
type counting struct {
	intf.IdService
	mu      sync.Mutex
	in, max int
	release chan struct{}
}

func (c *counting) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	c.mu.Lock()
	c.in++
	c.max = max(c.max, c.in)
	c.mu.Unlock()
	<-c.release
	c.mu.Lock()
	c.in--
	c.mu.Unlock()
	return make([]intf.Id, n), nil
}

// A connection has at most MaxCallsPerConn calls in flight: each call read
// runs on a goroutine of its own, and a client may pipeline any number.
func TestMaxCallsPerConn(t *testing.T) {
	svc := &counting{release: make(chan struct{})}
	c := dial(t, serve(t, svc, rpcserver.Options{MaxCallsPerConn: 3}))
	calls := make([]*rpc.Call, 10)
	for i := range calls {
		calls[i] = c.Go("IdService.GenIds", rpcapi.GenIdsArgs{Count: 1}, &rpcapi.GenIdsReply{}, nil)
	}
	require.Eventually(t, func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return svc.in == 3 }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // a fourth call would have entered by now
	close(svc.release)
	for _, call := range calls {
		<-call.Done
		require.NoError(t, call.Error)
	}
	assert.Equal(t, 3, svc.max, "never more than MaxCallsPerConn calls of the connection in the service")
}
