package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedPort is a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// A PostgreSQL segment store that cannot be reached at start does not stop
// server-rest: it is ready, serves Vesta IDs, answers /segment 503
// "segment store unavailable" (the reason, which names the database's
// address, only in the log), never logs the DSN's password, and stops
// cleanly. The DSN
// comes from the environment: a flag may not hold a password.
func TestSegmentStoreUnreachableAtStart(t *testing.T) {
	t.Parallel() // its own server process, data dir and port
	dsn := fmt.Sprintf("postgres://vesta:s3cret-pw@127.0.0.1:%d/vesta?connect_timeout=2", closedPort(t))
	p := startEnv(t, []string{"VESTA_SEGMENT_DSN=" + dsn}, "--listen", "127.0.0.1:0", "--machine", "3", "--data-dir", t.TempDir(),
		"--segment-store", "postgres", "--segment-tags", "order")
	base := p.waitReady(t)
	assert.NotEmpty(t, getBody(t, base+"/genid", ""))

	resp, err := http.Get(base + "/segment/order")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "segment store unavailable")
	assert.NotContains(t, string(body), "127.0.0.1")
	assert.NotContains(t, string(body), "s3cret-pw")

	p.stop(t)
	assert.Contains(t, p.logText(), "segment store unreachable at start")
	assert.NotContains(t, p.logText(), "s3cret-pw")
}
