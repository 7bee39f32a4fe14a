package main

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcserver/rpctest"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/stores"
)

func TestRun(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 5})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 2, 3, ""))
	assert.Equal(t, 2, bytes.Count(out.Bytes(), []byte("genid ")))
	assert.Contains(t, out.String(), "genids [")
	assert.Contains(t, out.String(), "machine:5 ")
	assert.Contains(t, out.String(), "genMethod:1 ")
	assert.NotContains(t, out.String(), "segment")
}

func TestRunSegment(t *testing.T) {
	tags, err := segment.ParseTags("order")
	require.NoError(t, err)
	g, err := stores.Open(context.Background(), stores.Config{Store: stores.SQLite, DataDir: t.TempDir(), Tags: tags,
		Settings: segment.Settings{Logger: slog.New(slog.DiscardHandler)}})
	require.NoError(t, err)
	defer g.Close()
	srv := rpctest.Start(t, rpctest.Config{Machine: 5, Segments: g})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 1, 3, "order"))
	assert.Contains(t, out.String(), "segment order [1 2 3]\n")
	err = run(ctx, &out, []string{srv.Addr}, 1, 3, "coupon")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
}
