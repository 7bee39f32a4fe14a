package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

func TestEveryMethod(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 78, MaxBatch: 500})
	c := newClient(t, []string{srv.Addr})
	ctx := context.Background()

	id, err := c.GenId(ctx)
	require.NoError(t, err)
	fields, err := c.ExpId(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(78), fields.Machine)
	assert.Equal(t, int64(intf.GenMethodCentral), fields.GenMethod)

	ids, err := c.GenIds(ctx, 500)
	require.NoError(t, err)
	require.Len(t, ids, 500)
	assert.Less(t, id, ids[0])

	// REFERENCE's worked example, every field given.
	made, err := c.MakeId(ctx, intf.FromFields(intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2}))
	require.NoError(t, err)
	assert.Equal(t, intf.Id(2705126582500361294), made)
	// Omitted fields come from the server: machine 78, genMethod 1.
	made, err = c.MakeId(ctx, intf.MakeIdRequest{Time: 371861805, Seq: 498081})
	require.NoError(t, err)
	assert.Equal(t, intf.Id(2705126582500361294-(1<<60)), made)
	// An explicit zero is not an omitted field.
	made, err = c.MakeId(ctx, intf.MakeIdRequest{Time: 371861805, Seq: 498081}.WithMachine(0).WithGenMethod(0))
	require.NoError(t, err)
	assert.Equal(t, intf.Id(2705126582500361294-(2<<60)-78), made)

	tm, err := c.TransTime(ctx, fields.Time, intf.MaxPeak)
	require.NoError(t, err)
	assert.True(t, tm.Equal(time.UnixMilli(intf.DefaultEpochMillis+fields.Time*1000)), tm)
}

func TestBadArgumentsComeBackAsIs(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{MaxBatch: 100})
	c := newClient(t, []string{srv.Addr})
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		call func() error
		want intf.FieldError
	}{
		{"makeid seq", func() error { _, err := c.MakeId(ctx, intf.MakeIdRequest{Time: 1, Seq: 1 << 20}); return err },
			intf.FieldError{Field: "seq", Value: 1 << 20, Min: 0, Max: 1<<20 - 1}},
		{"makeid machine", func() error {
			_, err := c.MakeId(ctx, intf.MakeIdRequest{Time: 1, Seq: 1}.WithMachine(1024))
			return err
		},
			intf.FieldError{Field: "machine", Value: 1024, Min: 0, Max: intf.MaxMachine}},
		{"batch 0", func() error { _, err := c.GenIds(ctx, 0); return err },
			intf.FieldError{Field: "count", Value: 0, Min: 1, Max: 100}},
		{"batch over the cap", func() error { _, err := c.GenIds(ctx, 101); return err },
			intf.FieldError{Field: "count", Value: 101, Min: 1, Max: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.NotErrorIs(t, err, intf.ErrUnavailable, "not a fail-over")
			var fe *intf.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.want, *fe)
			// The server lives on and is not marked down.
			_, err = c.GenId(ctx)
			require.NoError(t, err)
			assert.False(t, c.eps[0].down.Load())
		})
	}
	_, err := c.TransTime(ctx, 0, intf.IdType(2))
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
}

func TestEveryServerDown(t *testing.T) {
	c := newClient(t, []string{deadAddr(t), deadAddr(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.GenId(ctx)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	assert.NoError(t, ctx.Err(), "the error came before the deadline")
	assert.Contains(t, err.Error(), "connection refused")
	for _, ep := range c.eps {
		assert.True(t, ep.down.Load())
	}
	// While both back off, calls fail without dialling.
	_, err = c.GenIds(ctx, 3)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
}

func TestContextDeadlineOnAHungServer(t *testing.T) {
	c := newClient(t, []string{silentAddr(t)})
	ctx, cancel := context.WithTimeout(context.Background(), fairTime/4) // too short to be the server's fault
	defer cancel()
	_, err := c.GenId(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, intf.ErrUnavailable)
	assert.False(t, c.eps[0].down.Load(), "the caller's short deadline is not the server's failure")
}

// A server that sends nothing for a call that gave it a fair time is
// marked down at that call's deadline, and the next calls go to the next
// server.
func TestASilentServerIsMarkedDown(t *testing.T) {
	t.Parallel() // waits out a 1 s call timeout
	good, _ := serveScripted(t, &scripted{})
	// 1 s, not less: the calls after it, to the good server, must not
	// time out on a loaded machine.
	c := newClient(t, []string{silentAddr(t), good}, WithCallTimeout(time.Second))
	_, err := c.GenId(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, intf.ErrUnavailable)
	require.True(t, c.eps[0].down.Load(), "silent for a fair time")
	for range 10 {
		_, err := c.GenId(context.Background())
		require.NoError(t, err)
	}
}

func TestCallTimeoutAppliesWithoutADeadline(t *testing.T) {
	t.Parallel() // waits out a 50 ms call timeout
	c := newClient(t, []string{silentAddr(t)}, WithCallTimeout(50*time.Millisecond))
	_, err := c.ExpId(context.Background(), 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	srv := rpctest.Start(t, rpctest.Config{})
	c := newClient(t, []string{srv.Addr})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GenId(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestReconnectAfterRestart(t *testing.T) {
	t.Parallel() // the restart waits for the next second on the real clock
	srv := rpctest.Start(t, rpctest.Config{Machine: 3})
	c := newClient(t, []string{srv.Addr}, WithPoolSize(2))
	ctx := context.Background()
	before, err := c.GenIds(ctx, 10) // dials both pooled connections
	require.NoError(t, err)
	_, err = c.GenId(ctx)
	require.NoError(t, err)

	require.NoError(t, srv.Stop())
	srv2 := rpctest.Start(t, rpctest.Config{Machine: 3, Addr: srv.Addr, DataDir: srv.DataDir})

	// Both pooled connections are broken: each is dropped and redialled.
	for range 4 {
		id, err := c.GenId(ctx)
		require.NoError(t, err)
		assert.Greater(t, id, before[len(before)-1])
	}
	assert.False(t, c.eps[0].down.Load())
	assert.GreaterOrEqual(t, srv2.RPC.Stats().Accepted, uint64(2))
}

func TestRecoveryAfterBackoff(t *testing.T) {
	t.Parallel() // the restart waits for the next second on the real clock
	srv := rpctest.Start(t, rpctest.Config{Machine: 4})
	c := newClient(t, []string{srv.Addr})
	ctx := context.Background()
	_, err := c.GenId(ctx) // so that Stop stores the exact last second and the restart is quick
	require.NoError(t, err)
	require.NoError(t, srv.Stop())
	_, err = c.GenId(ctx)
	require.ErrorIs(t, err, intf.ErrUnavailable)
	require.True(t, c.eps[0].down.Load())

	rpctest.Start(t, rpctest.Config{Machine: 4, Addr: srv.Addr, DataDir: srv.DataDir})
	// The health check brings the server back.
	require.Eventually(t, func() bool { return !c.eps[0].down.Load() }, 10*time.Second, 10*time.Millisecond)
	_, err = c.GenId(ctx)
	assert.NoError(t, err)
}

func TestClose(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{})
	c, err := New([]string{srv.Addr}, WithLogger(quiet))
	require.NoError(t, err)
	_, err = c.GenId(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "idempotent")
	_, err = c.GenId(context.Background())
	assert.ErrorIs(t, err, intf.ErrClosed)
	assert.Nil(t, c.eps[0].slots[0].conn.Load())
}

func TestNewValidates(t *testing.T) {
	for name, tc := range map[string]struct {
		addrs []string
		opt   Option
	}{
		"no address":     {nil, nil},
		"bad address":    {[]string{"localhost"}, nil},
		"pool 0":         {[]string{"a:1"}, WithPoolSize(0)},
		"dial timeout 0": {[]string{"a:1"}, WithDialTimeout(0)},
		"call timeout":   {[]string{"a:1"}, WithCallTimeout(-1)},
		"back-off":       {[]string{"a:1"}, WithBackoff(time.Second, time.Millisecond)},
		"health":         {[]string{"a:1"}, WithHealthInterval(0)},
		"buffer":         {[]string{"a:1"}, WithBuffer(-1, 0)},
		"refill":         {[]string{"a:1"}, WithBuffer(10, intf.MaxBatch+1)},
		"logger":         {[]string{"a:1"}, WithLogger(nil)},
	} {
		var opts []Option
		if tc.opt != nil {
			opts = append(opts, tc.opt)
		}
		_, err := New(tc.addrs, opts...)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, name)
	}
}
