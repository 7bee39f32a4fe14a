package rpcapi

import (
	"context"
	"net"
	"net/rpc"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// recorder is an IdService that records the context it was called with
// and can block until that context is done.
type recorder struct {
	intf.IdService
	block    bool
	deadline chan bool // whether each call's ctx had a deadline
}

func (r *recorder) GenId(ctx context.Context) (int64, error) {
	_, ok := ctx.Deadline()
	r.deadline <- ok
	if r.block {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return 42, nil
}

func (r *recorder) GenIds(_ context.Context, n int) ([]int64, error) {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	return ids, nil
}

// pipe serves svc through a Receiver over an in-memory connection and
// returns the client side.
func pipe(t *testing.T, svc intf.IdService, maxBatch int) *Conn {
	t.Helper()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(svc, maxBatch)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), ServiceName)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDeadlineTravelsWithTheCall(t *testing.T) {
	r := &recorder{deadline: make(chan bool, 2)}
	c := pipe(t, r, 10)

	id, err := c.GenId(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(42), id)
	assert.False(t, <-r.deadline, "no deadline sent without one")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.GenId(ctx)
	require.NoError(t, err)
	assert.True(t, <-r.deadline, "the caller's deadline reaches the server")
}

func TestServerGivesUpWithTheCaller(t *testing.T) {
	r := &recorder{block: true, deadline: make(chan bool, 1)}
	c := pipe(t, r, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.GenId(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, <-r.deadline)
}

func TestCallWithDoneContextIsNotSent(t *testing.T) {
	r := &recorder{deadline: make(chan bool, 1)}
	c := pipe(t, r, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GenId(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, r.deadline, "the service was not called")
}

func TestBatchCap(t *testing.T) {
	c := pipe(t, &recorder{}, 10)
	ids, err := c.GenIds(context.Background(), 10)
	require.NoError(t, err)
	assert.Len(t, ids, 10)
	for _, n := range []int{0, -1, 11} {
		_, err := c.GenIds(context.Background(), n)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, n)
		assert.Equal(t, intf.FieldError{Field: "count", Value: int64(n), Min: 1, Max: 10}, *fe)
	}
}

func TestNewReceiverClampsMaxBatch(t *testing.T) {
	for _, n := range []int{0, -5, intf.MaxBatch + 1} {
		assert.Equal(t, intf.MaxBatch, NewReceiver(nil, n).maxBatch)
	}
	assert.Equal(t, 7, NewReceiver(nil, 7).maxBatch)
}

func TestUnknownServiceIsAServerError(t *testing.T) {
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(ServiceName, NewReceiver(&recorder{}, 1)))
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := NewConn(rpc.NewClient(b), "NoSuchService")
	defer c.Close()
	_, err := c.ExpId(context.Background(), 1)
	var se rpc.ServerError
	require.ErrorAs(t, err, &se)
	assert.NotErrorIs(t, err, intf.ErrUnavailable, "the server answered")
}

func TestBrokenConnectionIsATransportError(t *testing.T) {
	c := pipe(t, &recorder{}, 1)
	require.NoError(t, c.Close())
	_, err := c.GenId(context.Background())
	var te *TransportError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, rpc.ErrShutdown)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
}
