package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A host name whose trailing number has a leading zero ("web-01", the same
// id as "web-1") is refused at start, saying why and what to do.
func TestHostnameWithALeadingZeroIsRefused(t *testing.T) {
	t.Parallel()
	p := start(t, "--listen", "127.0.0.1:0", "--no-data-dir", "--segment-store", "off",
		"--machine-provider", "hostname", "--hostname", "web-01")
	code, log := p.exitOf(t)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, log, `hostname \"web-01\"`)
	assert.Contains(t, log, "leading zero")
}

// A segment tag near 2^63-1 hands out its last IDs, then answers a clear
// error naming the tag; it never wraps to a negative or repeated ID.
func TestSegmentTagEndsWithoutWrapping(t *testing.T) {
	t.Parallel()
	const initial = int64(1<<63 - 1 - 250) // room for two ranges of 100, not a third
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "16", "--data-dir", t.TempDir(),
		"--segment-tags", "end:"+strconv.FormatInt(initial, 10)+":100")
	base := p.waitReady(t)
	last := int64(0)
	var status int
	var body string
	for i := 0; i < 400; i++ {
		resp, err := http.Get(base + "/segment/end")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status, body = resp.StatusCode, strings.TrimSpace(string(b))
		if status != http.StatusOK {
			break
		}
		id, err := strconv.ParseInt(body, 10, 64)
		require.NoError(t, err, body)
		require.Greater(t, id, last, "increasing, never wrapped")
		require.GreaterOrEqual(t, id, initial)
		last = id
	}
	require.NotEqual(t, http.StatusOK, status, "the tag ran out")
	// docs/rest.md: a used-up tag is the documented, permanent 500 with a
	// message that says so (no Retry-After).
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Contains(t, body, `segment tag \"end\" has handed out its last ID`)
	assert.Contains(t, body, "use a new tag")
	assert.Greater(t, last, initial+100, "it handed out IDs of more than one range first")
	p.stop(t)
}
