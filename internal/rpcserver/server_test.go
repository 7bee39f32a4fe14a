package rpcserver_test

import (
	"context"
	"log/slog"
	"net"
	"net/rpc"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

func dial(t *testing.T, addr string) *rpc.Client {
	t.Helper()
	c, err := rpc.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// Every method through a plain net/rpc client and the wire types.
func TestEveryMethodOverTCP(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 78, MaxBatch: 1000})
	c := dial(t, srv.Addr)

	var one rpcapi.GenIdReply
	require.NoError(t, c.Call("IdService.GenId", rpcapi.GenIdArgs{}, &one))
	require.Nil(t, one.Err)
	var exp rpcapi.ExpIdReply
	require.NoError(t, c.Call("IdService.ExpId", rpcapi.ExpIdArgs{Id: one.Id}, &exp))
	assert.Equal(t, int64(78), exp.Id.Machine)
	assert.Equal(t, int64(intf.GenMethodCentral), exp.Id.GenMethod)

	var batch rpcapi.GenIdsReply
	require.NoError(t, c.Call("IdService.GenIds", rpcapi.GenIdsArgs{Count: 1000}, &batch))
	require.Nil(t, batch.Err)
	require.Len(t, batch.Ids, 1000)
	assert.Less(t, one.Id, batch.Ids[0])
	for i := 1; i < len(batch.Ids); i++ {
		require.Less(t, batch.Ids[i-1], batch.Ids[i])
	}

	// REFERENCE's worked example.
	var made rpcapi.MakeIdReply
	args := rpcapi.NewMakeIdArgs(intf.FromFields(intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2}))
	require.NoError(t, c.Call("IdService.MakeId", args, &made))
	require.Nil(t, made.Err)
	assert.Equal(t, intf.Id(2705126582500361294), made.Id)

	var tt rpcapi.TransTimeReply
	require.NoError(t, c.Call("IdService.TransTime", rpcapi.TransTimeArgs{Time: 0, Type: intf.MaxPeak}, &tt))
	require.Nil(t, tt.Err)
	assert.True(t, tt.Time.Equal(time.UnixMilli(intf.DefaultEpochMillis)), tt.Time)

	var bad rpcapi.GenIdsReply
	require.NoError(t, c.Call("IdService.GenIds", rpcapi.GenIdsArgs{Count: 1001}, &bad))
	require.NotNil(t, bad.Err)
	assert.Equal(t, rpcapi.CodeInvalidArgument, bad.Err.Code)
	assert.Equal(t, "count", bad.Err.Field.Field)
}

// gate is an IdService whose GenIds waits for release.
type gate struct {
	intf.IdService
	entered chan struct{}
	release chan struct{}
}

func (g *gate) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	close(g.entered)
	<-g.release
	return make([]intf.Id, n), nil
}

func startGate(t *testing.T) (*rpcserver.Server, *gate, string, chan error) {
	t.Helper()
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	srv, err := rpcserver.New(rpcapi.NewReceiver(g, 10), rpcserver.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return srv, g, ln.Addr().String(), served
}

func TestShutdownAnswersCallsInFlight(t *testing.T) {
	srv, g, addr, served := startGate(t)
	c := dial(t, addr)
	call := c.Go("IdService.GenIds", rpcapi.GenIdsArgs{Count: 3}, new(rpcapi.GenIdsReply), nil)
	<-g.entered

	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	assert.ErrorIs(t, <-served, rpcserver.ErrServerClosed, "stops accepting first")
	_, err := net.Dial("tcp", addr)
	assert.Error(t, err, "no new connections")

	close(g.release)
	<-call.Done
	require.NoError(t, call.Error, "the call in flight is answered")
	assert.Len(t, call.Reply.(*rpcapi.GenIdsReply).Ids, 3)
	require.NoError(t, <-shut)
	assert.Equal(t, uint64(0), srv.Stats().Open)
	var r rpcapi.GenIdsReply
	assert.Error(t, c.Call("IdService.GenIds", rpcapi.GenIdsArgs{Count: 1}, &r), "the connection is closed")
}

func TestShutdownIsBounded(t *testing.T) {
	srv, g, addr, served := startGate(t)
	defer close(g.release)
	c := dial(t, addr)
	call := c.Go("IdService.GenIds", rpcapi.GenIdsArgs{Count: 3}, new(rpcapi.GenIdsReply), nil)
	<-g.entered

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, srv.Shutdown(ctx), context.DeadlineExceeded)
	assert.ErrorIs(t, <-served, rpcserver.ErrServerClosed)
	<-call.Done
	assert.Error(t, call.Error, "the connection was closed under the call")
}

func TestServeAfterShutdown(t *testing.T) {
	srv, err := rpcserver.New(rpcapi.NewReceiver(&gate{}, 1), rpcserver.Options{})
	require.NoError(t, err)
	require.NoError(t, srv.Shutdown(context.Background()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	assert.ErrorIs(t, srv.Serve(ln), rpcserver.ErrServerClosed)
	_, err = net.Dial("tcp", ln.Addr().String())
	assert.Error(t, err, "Serve closed the listener")
}
