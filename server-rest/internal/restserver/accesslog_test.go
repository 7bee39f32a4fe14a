package restserver_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/syncbuf"
)

// At debug level every request is logged once, with its method, path,
// status, duration, remote address and size — routed or not — and
// nothing of its headers or query string, where secrets travel.
func TestAccessLog(t *testing.T) {
	var log syncbuf.Buffer
	_, ts := startServer(t, testConfigLog(t, &log, "--log-level", "debug", "--segment-store", "off"))
	secret := http.Header{"Authorization": {"Bearer s3cret-token"}, "Cookie": {"session=c00kie"}}
	do(t, http.MethodGet, ts.URL+"/genid?count=2&token=qu3ry", secret, nil)
	do(t, http.MethodGet, ts.URL+"/nope", secret, nil)
	do(t, http.MethodPost, ts.URL+"/genid", nil, nil)
	do(t, http.MethodGet, ts.URL+"/makeid?time=1", nil, nil)

	text := log.String()
	for _, s := range []string{"s3cret", "c00kie", "qu3ry", "Authorization", "token"} {
		assert.NotContains(t, text, s)
	}
	line := regexp.MustCompile(`msg="rest: request" method=(\S+) path=(\S+) status=(\d+) duration=\d[\d.]*[µmn]?s remote=127\.0\.0\.1:\d+ bytes=(\d+)`)
	var got []string
	for _, m := range line.FindAllStringSubmatch(text, -1) {
		got = append(got, strings.Join(m[1:4], " "))
		assert.NotEqual(t, "0", m[4], "the size of the body sent")
	}
	assert.Equal(t, []string{"GET /genid 200", "GET /nope 404", "POST /genid 405", "GET /makeid 400"}, got, text)
}

// Below debug level there is no access log.
func TestNoAccessLogAtInfo(t *testing.T) {
	var log syncbuf.Buffer
	_, ts := startServer(t, testConfigLog(t, &log, "--segment-store", "off"))
	do(t, http.MethodGet, ts.URL+"/genid", nil, nil)
	require.NotContains(t, log.String(), "rest: request")
}
