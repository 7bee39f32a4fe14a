package client

import (
	"context"
	"fmt"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

// scripted is an IdService receiver whose misbehaviour a test chooses: a
// slow or hung GenId, an error for every GenId or GenIds, or more IDs than
// asked for.
type scripted struct {
	delay       atomic.Int64                  // ns
	hang        atomic.Pointer[chan struct{}] // GenId waits until it is closed
	genErr      *rpcapi.Error
	genIdsErr   *rpcapi.Error
	extra       int
	genCalls    atomic.Int64
	genIdsCalls atomic.Int64
	next        atomic.Int64
}

func (f *scripted) GenId(_ rpcapi.GenIdArgs, r *rpcapi.GenIdReply) error {
	f.genCalls.Add(1)
	time.Sleep(time.Duration(f.delay.Load()))
	if h := f.hang.Load(); h != nil {
		<-*h
	}
	if f.genErr != nil {
		r.Err = f.genErr
		return nil
	}
	r.Id = intf.Id(f.next.Add(1))
	return nil
}

func (f *scripted) GenIds(a rpcapi.GenIdsArgs, r *rpcapi.GenIdsReply) error {
	f.genIdsCalls.Add(1)
	if f.genIdsErr != nil {
		r.Err = f.genIdsErr
		return nil
	}
	for range a.Count + f.extra {
		r.Ids = append(r.Ids, intf.Id(f.next.Add(1)))
	}
	return nil
}

// serveScripted serves f on 127.0.0.1 and returns its address and a
// count of the connections open on the server side.
func serveScripted(t *testing.T, f *scripted) (addr string, open *atomic.Int64) {
	t.Helper()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(rpcapi.ServiceName, f))
	open = new(atomic.Int64)
	addr = nettest.Serve(t, func(c net.Conn) {
		open.Add(1)
		srv.ServeConn(c) // closes c when the client does
		open.Add(-1)
	})
	return addr, open
}

func TestCloseEndsACallInFlightWithoutRedialling(t *testing.T) {
	f := &scripted{}
	addr, open := serveScripted(t, f)
	c, err := New([]string{addr}, WithPoolSize(1), WithLogger(quiet))
	require.NoError(t, err)
	_, err = c.GenId(context.Background()) // dials the one slot
	require.NoError(t, err)
	hang := make(chan struct{})
	release := sync.OnceFunc(func() { close(hang) })
	f.hang.Store(&hang)
	t.Cleanup(release) // runs before the server's cleanup waits for its handlers
	res := make(chan error, 1)
	go func() { _, err := c.GenId(context.Background()); res <- err }()
	// The call is in flight: the server holds it until released.
	require.Eventually(t, func() bool { return f.genCalls.Load() == 2 }, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Close())
	assert.ErrorIs(t, <-res, intf.ErrClosed, "the call Close cut short is not re-sent on a new connection")
	assert.Equal(t, int64(2), f.genCalls.Load(), "nor on the same one")
	release() // the server's handler ends; its connection must be gone
	assert.Eventually(t, func() bool { return open.Load() == 0 }, 2*time.Second, 10*time.Millisecond,
		"no connection outlives Close")
}

func TestCloseReleasesACallToAHungServer(t *testing.T) {
	// A silent server that says when the call's first bytes arrived.
	sent := make(chan struct{})
	var once sync.Once
	addr := nettest.Serve(t, func(c net.Conn) {
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			once.Do(func() { close(sent) })
		}
	})
	c, err := New([]string{addr}, WithPoolSize(1), WithLogger(quiet))
	require.NoError(t, err)
	res := make(chan error, 1)
	go func() { _, err := c.GenId(context.Background()); res <- err }() // no deadline
	select {
	case <-sent: // the call is on the wire, waiting for an answer that never comes
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the server")
	}
	require.NoError(t, c.Close())
	select {
	case err := <-res:
		assert.ErrorIs(t, err, intf.ErrClosed)
	case <-time.After(2 * time.Second):
		t.Fatal("a call without a deadline is still blocked 2s after Close")
	}
}

// pipeDialer serves each address of servers in memory: every dial is a
// net.Pipe whose far end a net/rpc server of that script serves. Inside a
// synctest bubble the client then runs on the bubble's fake clock.
func pipeDialer(servers map[string]*scripted) func(context.Context, string) (net.Conn, error) {
	return func(_ context.Context, addr string) (net.Conn, error) {
		f, ok := servers[addr]
		if !ok {
			return nil, fmt.Errorf("no server at %s", addr)
		}
		srv := rpc.NewServer()
		if err := srv.RegisterName(rpcapi.ServiceName, f); err != nil {
			return nil, err
		}
		near, far := net.Pipe()
		go srv.ServeConn(far) // ends when the client closes near
		return near, nil
	}
}

// On the fake clock of a synctest bubble, 2 s of calls while the first
// of two servers is fenced.
func TestHealthProbeKeepsAFencedServerDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fenced := &scripted{genErr: rpcapi.ToWire(intf.ErrFenced)}
		c, err := New([]string{"fenced:1", "good:1"}, WithLogger(quiet), WithHealthInterval(20*time.Millisecond),
			WithBackoff(20*time.Millisecond, 5*time.Second),
			WithDialer(pipeDialer(map[string]*scripted{"fenced:1": fenced, "good:1": {}})))
		require.NoError(t, err)
		defer c.Close()
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			_, err := c.GenId(context.Background())
			require.NoError(t, err, "the healthy server serves every call")
		}
		// The fenced server answers calls but cannot issue: the probes
		// (GenId) fail too, so its back-off doubles from 20 ms (±20%) and
		// it sees about 7 calls in 2 s; a probe that reset the back-off
		// would let ~100 through (one per 20 ms health interval).
		calls := fenced.genCalls.Load()
		assert.Less(t, calls, int64(15), "calls and probes that reached the fenced server")
		assert.GreaterOrEqual(t, calls, int64(4), "the probes kept trying it")
		t.Logf("the fenced server saw %d calls and probes in 2 s", calls)
	})
}

func TestAReplyWithTooManyIdsIsRefused(t *testing.T) {
	f := &scripted{extra: 5}
	addr, _ := serveScripted(t, f)
	c := newClient(t, []string{addr})
	_, err := c.GenIds(context.Background(), 10)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.ErrorIs(t, err, rpcapi.ErrProtocol)

	calls := f.genIdsCalls.Load()
	buffered, err := New([]string{addr}, WithBuffer(10, 10), WithLogger(quiet))
	require.NoError(t, err)
	// The refill asked and got a reply it refused: the buffer stays empty.
	require.Eventually(t, func() bool { return f.genIdsCalls.Load() > calls }, 5*time.Second, time.Millisecond)
	assert.Zero(t, buffered.Buffered(), "a reply with too many IDs is not buffered")
	closed := make(chan error, 1)
	go func() { closed <- buffered.Close() }()
	select {
	case err := <-closed:
		assert.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("Close hung behind the buffer refill")
	}
}

func TestBufferRefillFollowsTheServersMaxBatch(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 3, MaxBatch: 100})
	c := newClient(t, []string{srv.Addr}, WithBuffer(1000, 500))
	require.Eventually(t, func() bool { return len(c.buf.ids) == 1000 }, 5*time.Second, 10*time.Millisecond,
		"the stock fills in batches of the server's maxBatch (100), not the 500 asked for")
	seen := map[intf.Id]bool{}
	for range 1000 {
		id, err := c.GenId(context.Background())
		require.NoError(t, err)
		require.False(t, seen[id], "duplicate %d", id)
		seen[id] = true
	}
}

// A caller waiting for another caller's dial to the same slot returns at
// its own deadline, not the dial timeout.
func TestWaitingForADialKeepsTheDeadline(t *testing.T) {
	t.Parallel() // unreachableAddr waits out a dial timeout
	addr := unreachableAddr(t)
	c := newClient(t, []string{addr}, WithPoolSize(1), WithDialTimeout(3*time.Second))
	go c.GenId(context.Background()) // dials the one slot and hangs for the dial timeout
	require.Eventually(t, func() bool { return len(c.eps[0].slots[0].dialing) == 1 }, 5*time.Second, time.Millisecond,
		"the first caller is dialling")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GenId(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second)
}

// unreachableAddr is a loopback address whose dials hang: a listener with
// a backlog of 0 that never accepts, its queue filled.
func unreachableAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	for range 8 {
		cn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return addr // the queue is full: dials hang from here on
		}
		t.Cleanup(func() { cn.Close() })
	}
	t.Skip("this kernel accepts every connection into the queue; cannot make a dial hang")
	return ""
}
