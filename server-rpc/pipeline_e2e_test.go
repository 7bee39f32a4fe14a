package main

import (
	"bufio"
	"context"
	"encoding/gob"
	"fmt"
	"net"
	"net/rpc"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/internal/testbin"
)

// pipeline sends n GenId calls with token on c as fast as the server
// reads them, never reading a reply; it returns how many it sent (into the
// server and the sockets' buffers) before the server stopped reading, or
// closed c when its replies could not be written.
func pipeline(c net.Conn, token string, n int) int {
	w := bufio.NewWriter(c)
	enc := gob.NewEncoder(w)
	sent := 0
	for ; sent < n; sent++ {
		_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if enc.Encode(&rpc.Request{ServiceMethod: rpcapi.ServiceName + ".GenId", Seq: uint64(sent)}) != nil ||
			enc.Encode(rpcapi.GenIdArgs{Token: token}) != nil || w.Flush() != nil {
			break
		}
	}
	return sent
}

// A client without a valid token pipelining calls on a few connections
// without reading the replies must not grow server-rpc (a goroutine and a
// reply per call would take gigabytes): a connection that has not
// presented a valid token has one call in flight at most: the server stops
// reading it, memory stays flat, and a legitimate client is served beside.
// Fast cover: rpcserver.TestMaxCallsPerConn.
func TestPipelinedCallsWithoutATokenAreBounded(t *testing.T) {
	stresstest.Only(t, "half a million pipelined calls at a real server-rpc")
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	auth := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(fmt.Sprintf("clients:\n  - name: orders\n    tokenSHA256: %s\n    scopes: [genid]\n",
		access.HashTokenHex(tokOrders))), 0o600))
	srv := startBinary(t, bin, "--auth-file", auth, "--machine", "3")
	legit, err := client.New([]string{srv.addr}, client.WithToken(tokOrders), client.WithCallTimeout(5*time.Second))
	require.NoError(t, err)
	defer legit.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = legit.GenId(ctx)
	require.NoError(t, err)
	before := testbin.RSS(t, srv.proc.Pid)

	sent := make(chan int, 4)
	for range 4 {
		c, err := (&net.Dialer{LocalAddr: idleFrom}).Dial("tcp", srv.addr)
		require.NoError(t, err)
		defer c.Close()
		go func() { sent <- pipeline(c, "vesta_not_a_client", 200_000) }()
	}
	served, failed := 0, 0
	var took []time.Duration
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		t0 := time.Now()
		_, err := legit.GenId(ctx)
		took = append(took, time.Since(t0))
		if err != nil {
			failed++
			t.Logf("the legitimate client: %v", err)
		} else {
			served++
		}
	}
	assert.Zero(t, failed, "a legitimate client is served beside the flood")
	slices.Sort(took)
	total := 0
	for range 4 {
		total += <-sent
	}
	after := testbin.RSS(t, srv.proc.Pid)
	t.Logf("4 connections without a token sent %d calls before the server stopped reading; RSS %d MiB before, %d MiB after; "+
		"the legitimate client: %d of %d calls succeeded meanwhile, p50 %s, p99 %s",
		total, before>>20, after>>20, served, served+failed, took[len(took)/2], took[len(took)*99/100])
	assert.Less(t, after, before+64<<20, "memory stays flat")
}
