package restserver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
)

// rawGet sends one request on c as written and reads the answer.
func rawGet(c net.Conn, request string) (response, error) {
	if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return response{}, err
	}
	if _, err := io.WriteString(c, request); err != nil {
		return response{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: string(b), header: resp.Header}, err
}

const healthz = "GET /healthz HTTP/1.1\r\nHost: vesta\r\n\r\n"

// One remote IP holds at most maxConnsPerIP (64 by default) connections:
// the 65th is closed at accept, while another address is served, and a
// slot freed is taken again.
func TestMaxConnsPerIP(t *testing.T) {
	cfg := testConfig(t)
	require.Equal(t, 64, cfg.MaxConnsPerIP)
	srv := newServer(cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel() }()
	base, done := serve(t, ctx, srv)
	addr := strings.TrimPrefix(base, "http://")

	held := make([]net.Conn, 64)
	for i := range held {
		held[i] = nettest.DialFrom(t, "127.0.0.1", addr)
		r, err := rawGet(held[i], healthz)
		require.NoError(t, err, "connection %d", i+1)
		require.Equal(t, 200, r.status)
	}
	_, err := rawGet(nettest.DialFrom(t, "127.0.0.1", addr), healthz)
	require.Error(t, err, "the 65th connection from 127.0.0.1 is closed")

	r, err := rawGet(nettest.DialFrom(t, "127.0.0.2", addr), healthz)
	require.NoError(t, err, "another address is served")
	assert.Equal(t, 200, r.status)
	assert.Contains(t, serveInProcess(srv, "/metrics").body, "vesta_http_conns_refused_total 1")

	require.NoError(t, held[0].Close())
	require.Eventually(t, func() bool {
		r, err := rawGet(nettest.DialFrom(t, "127.0.0.1", addr), healthz)
		return err == nil && r.status == 200
	}, 10*time.Second, 5*time.Millisecond, "a closed connection frees its slot")
	cancel()
	require.NoError(t, <-done)
}

// net/http's own answers to requests it cannot read — headers over the
// limit, no HTTP at all — have the JSON shape of every other error.
func TestOversizedAndMalformedRequestsAreJSON(t *testing.T) {
	cfg := testConfig(t)
	srv := newServer(cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := serve(t, ctx, srv)
	addr := strings.TrimPrefix(base, "http://")

	huge := "GET /genid HTTP/1.1\r\nHost: vesta\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"
	r, err := rawGet(nettest.DialFrom(t, "127.0.0.1", addr), huge)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.status)
	msg, _ := jsonError(t, r)
	assert.Equal(t, "request headers too large: the limit is 16384 bytes", msg)

	for request, want := range map[string]string{
		"NOT HTTP AT ALL\r\n\r\n":                   "bad request: ",
		"GET /genid HTTP/1.1\r\n\r\n":               "bad request: missing required Host header",
		"GET /genid HTTP/1.1\r\nBad Header\r\n\r\n": "bad request: ",
	} {
		r, err := rawGet(nettest.DialFrom(t, "127.0.0.1", addr), request)
		require.NoError(t, err, "%q", request)
		assert.Equal(t, 400, r.status, "%q", request)
		msg, _ := jsonError(t, r)
		assert.Contains(t, msg, want, "%q", request)
	}
	r, err = rawGet(nettest.DialFrom(t, "127.0.0.1", addr), healthz)
	require.NoError(t, err)
	assert.Equal(t, 200, r.status, "and a good request is still served")
	cancel()
	require.NoError(t, <-done)
}
