package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/rpcserver/rpctest"
	"github.com/vesta-go/vesta/service/segment"
)

// Two servers on one store serve a period tag's numbers over RPC; the
// client takes them from both: formatted, unique, from 1.
func TestNextNumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := segtest.NewMem()
	mem.SetNow(func() time.Time { return time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC) })
	require.NoError(t, mem.CreatePeriodTag(ctx, segment.PeriodTag{Tag: "order", Group: segment.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 3}))
	var addrs []string
	for range 2 {
		g, err := segtest.Open(ctx, mem, nil, segment.Settings{Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, g.Close()) })
		addrs = append(addrs, rpctest.Start(t, rpctest.Config{Segments: g}).Addr)
	}
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
