package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --call-timeout bounds a call that must wait for the next time unit: with
// 1 ms, once a max-peak second's sequence is used up the next batch answers
// 503 with the documented message instead of waiting up to a second.
func TestCallTimeoutThroughTheBinary(t *testing.T) {
	t.Parallel()
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "14", "--no-data-dir", "--segment-store", "off",
		"--max-batch", "100000", "--call-timeout", "1ms")
	base := p.waitReady(t)
	client := &http.Client{Timeout: 30 * time.Second}
	var body string
	status := 0
	for i := 0; i < 200 && status != http.StatusServiceUnavailable; i++ {
		resp, err := client.Get(base + "/genid?count=100000")
		require.NoError(t, err)
		b := new(strings.Builder)
		_, _ = io.Copy(b, resp.Body)
		resp.Body.Close()
		status, body = resp.StatusCode, b.String()
		require.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, status, body)
	}
	require.Equal(t, http.StatusServiceUnavailable, status, "a used-up unit made a call wait past the bound")
	assert.Contains(t, body, "callTimeout of 1ms")
	assert.True(t, strings.HasPrefix(body, "{"), "a JSON error: %s", body)
	p.stop(t)
}

// --max-conns-per-ip: connections over the limit from one address are
// closed at accept, another address is served; a request with oversized
// headers gets the JSON error shape, not net/http's plain text.
func TestConnLimitsThroughTheBinary(t *testing.T) {
	t.Parallel()
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "15", "--no-data-dir", "--segment-store", "off",
		"--max-conns-per-ip", "3")
	base := p.waitReady(t)
	addr := strings.TrimPrefix(base, "http://")
	from2 := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 3 {
		c, err := from2.Dial("tcp", addr)
		require.NoError(t, err)
		held = append(held, c)
	}
	// The 4th from 127.0.0.2 is closed at once: a read sees EOF.
	c, err := from2.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err, "the connection over the limit is closed")
	// 127.0.0.1 is another address: served.
	assert.Equal(t, http.StatusOK, get(base+"/genid"))

	req, err := http.NewRequest(http.MethodGet, base+"/genid", nil)
	require.NoError(t, err)
	req.Header.Set("X-Big", strings.Repeat("a", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b := new(strings.Builder)
	_, _ = io.Copy(b, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	assert.True(t, strings.HasPrefix(b.String(), `{"error":`), "JSON, not net/http's text: %q", b.String())
	for _, c := range held { // a connection that never sent a request delays shutdown by 5 s
		c.Close()
	}
	held = nil
	p.stop(t)
}

// A client that sends part of a request's headers and stops is cut off by
// the headers' timeout, 5 s: after the accept on a new connection, after
// the request's first byte on a kept-alive one. The server closes it, not
// sooner.
func TestSlowHeadersAreCutThroughTheBinary(t *testing.T) {
	t.Parallel()
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "17", "--no-data-dir", "--segment-store", "off")
	base := p.waitReady(t)
	addr := strings.TrimPrefix(base, "http://")
	// cutAfter sends partial on c and returns how long after since the
	// server closed c.
	cutAfter := func(c net.Conn, partial string, since time.Time) time.Duration {
		t.Helper()
		_, err := io.WriteString(c, partial)
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
		_, err = io.Copy(io.Discard, c)
		require.NoError(t, err, "the server closed the connection (EOF), before the test's minute")
		return time.Since(since)
	}

	dialed := time.Now() // the server's accept comes after
	fresh, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer fresh.Close()
	kept, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer kept.Close()
	_, err = io.WriteString(kept, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	buf := make([]byte, 512)
	n, err := kept.Read(buf)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200 "), "%s", buf[:n])

	done := make(chan time.Duration, 1)
	go func() { done <- cutAfter(kept, "GET /genid HTTP/1.1\r\n", time.Now()) }()
	assert.GreaterOrEqual(t, cutAfter(fresh, "GET /genid HTTP/1.1\r\nHost: x\r\n", dialed), 5*time.Second,
		"a new connection, from its accept")
	assert.GreaterOrEqual(t, <-done, 5*time.Second, "a kept-alive connection, from its request's first byte")
	p.stop(t)
}
