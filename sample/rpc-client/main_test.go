package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/server-rpc/rpcserver/rpctest"
)

func TestRun(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 5})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 2, 3))
	assert.Equal(t, 2, bytes.Count(out.Bytes(), []byte("genid ")))
	assert.Contains(t, out.String(), "genids [")
	assert.Contains(t, out.String(), "machine:5 ")
	assert.Contains(t, out.String(), "genMethod:1 ")
}
