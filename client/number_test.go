package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Two servers on one store serve a period tag's numbers over RPC; the
// client takes them from both: formatted, unique, from 1.
func TestNextNumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addrs := periodServers(t, segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 3})
	seen := map[string]bool{}
	for _, addr := range addrs {
		c := newClient(t, []string{addr})
		for range 5 {
			n, err := c.NextNumber(ctx, "order")
			require.NoError(t, err)
			assert.Equal(t, "20261127", n.Period)
			assert.Equal(t, fmt.Sprintf("ORD20261127%06d", n.Seq), n.Text)
			assert.False(t, seen[n.Text], n.Text)
			seen[n.Text] = true
		}
	}
	assert.True(t, seen["ORD20261127000001"])

	c := newClient(t, addrs)
	_, err := c.NextNumber(ctx, "coupon")
	require.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.NotErrorIs(t, err, intf.ErrUnavailable, "not a fail-over")
	_, err = c.NextNumber(ctx, "a b")
	require.ErrorIs(t, err, intf.ErrInvalidArgument)

	off := newClient(t, []string{rpctest.Start(t, rpctest.Config{}).Addr})
	_, err = off.NextNumber(ctx, "order")
	require.ErrorIs(t, err, ErrSegmentOff)
}

// A period whose {seq:N} is used up comes back from the server as an
// error matching intf.ErrPeriodExhausted, with its *intf.PeriodExhaustedError
// (the tag, the period, the width), and is an answer: no fail-over.
func TestNextNumberPeriodExhausted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addrs := periodServers(t, segstore.PeriodTag{Tag: "tiny", Group: segstore.GroupDay, Format: "T{yyyyMMdd}{seq:1}", Step: 4})
	first := newClient(t, addrs[:1])
	for seq := int64(1); seq <= 9; seq++ {
		n, err := first.NextNumber(ctx, "tiny")
		require.NoError(t, err)
		require.Equal(t, seq, n.Seq)
	}
	c := newClient(t, addrs) // the second server holds no range: only its own draw tells it
	for range 2 {
		_, err := c.NextNumber(ctx, "tiny")
		require.ErrorIs(t, err, intf.ErrPeriodExhausted)
		assert.NotErrorIs(t, err, intf.ErrUnavailable, "not a fail-over")
		var pe *intf.PeriodExhaustedError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, []any{"tiny", "20261127", 1, int64(9)}, []any{pe.Tag, pe.Period, pe.Width, pe.Max})
		assert.Equal(t, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), pe.Ends.UTC())
		assert.Positive(t, pe.RetryAfter)
	}
}

// periodServers starts two RPC servers on one in-memory store holding tag,
// on 2026-11-27, and returns their addresses.
func periodServers(t *testing.T, tag segstore.PeriodTag) []string {
	t.Helper()
	ctx := context.Background()
	mem := segtest.NewMem()
	mem.SetNow(func() time.Time { return time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC) })
	require.NoError(t, mem.CreatePeriodTag(ctx, tag))
	var addrs []string
	for range 2 {
		g, err := segtest.Open(ctx, mem, nil, segment.Settings{Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, g.Close()) })
		addrs = append(addrs, rpctest.Start(t, rpctest.Config{Segments: g}).Addr)
	}
	return addrs
}
