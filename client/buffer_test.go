package client

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
)

func TestBufferedClient(t *testing.T) {
	t.Parallel() // its own server, like every parallel test here
	srv := rpctest.Start(t, rpctest.Config{Machine: 9})
	c, err := New([]string{srv.Addr}, WithLogger(quiet), WithBuffer(100, 30))
	require.NoError(t, err)
	ctx := context.Background()

	// The stock fills in the background at start.
	require.Eventually(t, func() bool { return len(c.buf.ids) == 100 }, 10*time.Second, time.Millisecond)

	seen := map[intf.Id]bool{}
	for range 1000 {
		id, err := c.GenId(ctx)
		require.NoError(t, err)
		require.False(t, seen[id], "duplicate %d", id)
		seen[id] = true
	}
	// It is refilled after being drawn below half. (Drawn only to just
	// above half it stays there: the last draws may have left it so.)
	for len(c.buf.ids) >= c.buf.low {
		id, err := c.GenId(ctx)
		require.NoError(t, err)
		require.False(t, seen[id], "duplicate %d", id)
		seen[id] = true
	}
	require.Eventually(t, func() bool { return len(c.buf.ids) == 100 }, 10*time.Second, time.Millisecond)
	// Fresh GenIds come after everything drawn so far... and the buffer
	// holds IDs from this server.
	id := <-c.buf.ids
	assert.Equal(t, int64(9), id.Fields().Machine)
	assert.False(t, seen[id])

	require.NoError(t, c.Close())
	_, err = c.GenId(ctx)
	assert.ErrorIs(t, err, intf.ErrClosed, "buffered IDs are not served after Close")
}

func TestBufferFallsBackToTheServer(t *testing.T) {
	// Every refill fails (and the server stays up): GenId still works,
	// one call at a time.
	f := &scripted{genIdsErr: rpcapi.ToWire(errors.New("disk on fire"))}
	addr, _ := serveScripted(t, f)
	c := newClient(t, []string{addr}, WithBuffer(100, 50))
	for range 20 {
		_, err := c.GenId(context.Background())
		require.NoError(t, err)
	}
	assert.Empty(t, c.buf.ids)
	assert.EqualValues(t, 20, f.genCalls.Load(), "every GenId went to the server")
}

func TestBufferTake(t *testing.T) {
	b := newBuffer(4)
	<-b.kick // the initial fill request
	_, ok := b.take()
	assert.False(t, ok)
	assert.Len(t, b.kick, 1, "an empty take asks for a refill")
	<-b.kick
	for i := range 4 {
		b.ids <- intf.Id(i)
	}
	id, ok := b.take()
	assert.True(t, ok)
	assert.Equal(t, intf.Id(0), id)
	assert.Empty(t, b.kick, "3 of 4 left: no refill yet")
	_, _ = b.take()
	_, _ = b.take()
	assert.Len(t, b.kick, 1, "below half: refill")
}

// A normal Close of a buffered client logs no warning.
func TestNoWarningOnClose(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{})
	var warned atomic.Int64
	c, err := New([]string{srv.Addr}, WithLogger(slog.New(countWarn{&warned})), WithBuffer(1000, 10))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.Buffered() > 0 }, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Close())
	assert.Zero(t, warned.Load())
}

// countWarn counts the records at warn level or above.
type countWarn struct{ n *atomic.Int64 }

func (h countWarn) Enabled(context.Context, slog.Level) bool { return true }
func (h countWarn) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.n.Add(1)
	}
	return nil
}
func (h countWarn) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countWarn) WithGroup(string) slog.Handler      { return h }
