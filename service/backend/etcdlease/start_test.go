package etcdlease_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

func TestEtcdDownAtStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	const dialTimeout = time.Second
	lease := newLease(t, "a", withEndpoint(dead), func(o *etcdlease.Options) { o.DialTimeout = dialTimeout })
	// The caller allows far more than the dial timeout: the lease must
	// give up by itself, with its own error.
	ctx, cancel := context.WithTimeout(bg, 10*dialTimeout)
	defer cancel()
	start := time.Now()
	_, err = service.New(ctx, settings(t, lease, "a"))
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.NoError(t, ctx.Err(), "New gave up before the caller's deadline")
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), "etcd "+dead)
	assert.Contains(t, err.Error(), "no answer within the dial timeout 1s")
	t.Logf("etcd down: service.New failed after %s: %v", elapsed.Round(time.Millisecond), err)
}

func TestClockSkewRefusesToStart(t *testing.T) {
	t.Parallel()
	startNode(t, "a")
	startNode(t, "b")
	c := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	const bound = etcdlease.DefaultMaxClockSkew
	// Offsets well past the bound: the first, lenient read allows a report
	// a mark interval (1 s) plus the read's own time old, and a loaded
	// machine under -race can take a second to read (CI saw 2.5 s pass).
	for _, off := range []time.Duration{4 * time.Second, -4 * time.Second} {
		t.Run(fmt.Sprint(off), func(t *testing.T) {
			name := fmt.Sprintf("skewed%d", off.Milliseconds())
			lease := newLease(t, name, func(o *etcdlease.Options) { o.Prefix = keys.Prefix })
			s := settings(t, lease, name)
			s.Clock = offsetClock{Off: off}
			_, err := service.New(bg, s)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrClockBehind)
			var skew *etcdlease.ClockSkewError
			require.True(t, errors.As(err, &skew), "a *ClockSkewError: %v", err)
			assert.Equal(t, 2, skew.Nodes)
			assert.Equal(t, bound, skew.Bound)
			// The reports are at most a mark interval old, so the skew
			// seen is the offset less up to that much.
			assert.Equal(t, off > 0, skew.Skew > 0, "the sign says ahead or behind")
			assert.Greater(t, skew.Skew.Abs(), bound)
			assert.LessOrEqual(t, skew.Skew.Abs(), off.Abs())
			dir := map[bool]string{true: "ahead of", false: "behind"}[off > 0]
			assert.Contains(t, err.Error(), "at least "+skew.Skew.Abs().Round(time.Millisecond).String()+" "+dir+" the median of 2 live node(s)")
			_, _, held := get(t, c, keys.Clock(name))
			assert.False(t, held, "the refused node left no clock report")
			t.Log(err)
		})
	}
	// A clock within the bound starts.
	lease := newLease(t, "close")
	s := settings(t, lease, "close")
	s.Clock = offsetClock{Off: bound / 2}
	svc := startService(t, s)
	assert.Equal(t, int64(2), svc.Stats().Machine)
	resp, err := c.Get(bg, keys.Machines(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.Equal(t, int64(3), resp.Count, "the refused nodes claimed no id")
}

func TestRunTwiceFails(t *testing.T) {
	n := startNode(t, "a")
	err := n.lease.Run(bg, nil)
	assert.ErrorIs(t, err, etcdlease.ErrRunning)
}
