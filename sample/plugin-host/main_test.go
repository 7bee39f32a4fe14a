package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
)

func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	bin := rpctest.BuildServerRPC(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, bin, 7, t.TempDir()))
	assert.Equal(t, 3, bytes.Count(out.Bytes(), []byte("genid ")))
	assert.Contains(t, out.String(), "machine:7 ")
	assert.Contains(t, out.String(), "genMethod:0 ", "a plugin is embedded")
	assert.Contains(t, out.String(), "plugin stopped")
}
