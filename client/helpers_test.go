package client

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
)

var quiet = slog.New(slog.DiscardHandler)

// newClient is New with quiet logs and quick back-off; it closes the
// client at the end of the test.
func newClient(t *testing.T, addrs []string, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithLogger(quiet), WithBackoff(20*time.Millisecond, 200*time.Millisecond),
		WithHealthInterval(20 * time.Millisecond)}, opts...)
	c, err := New(addrs, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// deadAddr is an address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// silentAddr accepts connections and never answers.
func silentAddr(t *testing.T) string { return nettest.Silent(t) }
