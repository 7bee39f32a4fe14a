package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/tlstest"
)

// newServer runs the real server-rest on 127.0.0.1: machine 78, tag
// "order" in segment mode on SQLite, and more args; it returns once the
// server issues.
func newServer(t *testing.T, args ...string) *leasetest.Rest {
	t.Helper()
	dir := t.TempDir()
	srv := leasetest.StartRest(t, nil, append([]string{"--machine", "78", "--data-dir", dir, "--log-level", "warn",
		"--segment-store", "sqlite", "--segment-dsn", filepath.Join(dir, "segments.db"), "--segment-tags", "order"}, args...)...)
	return srv
}

// issuing waits until srv answers /readyz.
func issuing(t *testing.T, base string, c *http.Client) {
	t.Helper()
	leasetest.Eventually(t, 30*time.Second, "server-rest ready", func() bool {
		resp, err := c.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func TestRun(t *testing.T) {
	srv := newServer(t)
	issuing(t, srv.Base, http.DefaultClient)

	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"--url", srv.Base + "/", "-n", "3"}, &out, ""))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Regexp(t, `^genid: \d+$`, lines[0])
	batch := regexp.MustCompile(`^batch of 3: (\d+) \d+ \d+$`).FindStringSubmatch(lines[1])
	require.NotNil(t, batch, lines[1])
	assert.Regexp(t, `^expid `+batch[1]+`: machine=78 seq=\d+ time=\d+ \(\d{4}-\d\d-\d\dT[0-9:.]+Z\) genMethod=2 type=0 \(max-peak\) version=0$`, lines[2])
}

func TestRunSegment(t *testing.T) {
	srv := newServer(t)
	issuing(t, srv.Base, http.DefaultClient)
	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"--url", srv.Base, "-n", "3", "--tag", "order"}, &out, ""))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4, out.String())
	assert.Equal(t, "segment order: 1 2 3", lines[3])

	err := run(context.Background(), []string{"--url", srv.Base, "--tag", "coupon"}, io.Discard, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
	assert.Contains(t, err.Error(), "unknown segment tag")
}

// A server that answers an error: the sample reports its status and
// message (server-rest answers so while it starts).
func TestRunReportsServerErrors(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":"id service unavailable: starting"}`)
	}))
	defer ts.Close()
	err := run(context.Background(), []string{"--url", ts.URL}, io.Discard, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), "starting")
}

func TestRunReportsBadInput(t *testing.T) {
	srv := newServer(t)
	issuing(t, srv.Base, http.DefaultClient)
	err := run(context.Background(), []string{"--url", srv.Base, "-n", "0"}, io.Discard, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400")
	assert.Contains(t, err.Error(), "parameter count")
}

// The sample against a server with TLS and an auth file: the CA from
// --ca-file, the token from --token-file or $VESTA_TOKEN.
func TestRunSecure(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "server CA")
	files := tlstest.Write(t, dir, ca.Server(t), nil)
	const token = "vesta_sample-rest-token"
	sum := sha256.Sum256([]byte(token))
	auth := filepath.Join(dir, "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte("clients:\n  - name: sample\n    tokenSHA256: \""+hex.EncodeToString(sum[:])+
		"\"\n    scopes: [genid, decode]\n"), 0o600))
	srv := newServer(t, "--tls-cert", files.Cert, "--tls-key", files.Key, "--auth-file", auth)
	url := "https://" + strings.TrimPrefix(srv.Base, "http://")
	issuing(t, url, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}})
	caFile, tokenFile := filepath.Join(dir, "root.pem"), filepath.Join(dir, "sample.token")
	tlstest.WriteFile(t, caFile, ca.PEM)
	tlstest.WriteFile(t, tokenFile, []byte(token+"\n"))

	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"--url", url, "--ca-file", caFile, "--token-file", tokenFile}, &out, ""))
	assert.Contains(t, out.String(), "machine=78")
	require.NoError(t, run(context.Background(), []string{"--url", url, "--ca-file", caFile}, &out, token), "$VESTA_TOKEN")
	err := run(context.Background(), []string{"--url", url, "--ca-file", caFile}, io.Discard, "")
	assert.ErrorContains(t, err, "401 Unauthorized: unauthenticated: no token")
	err = run(context.Background(), []string{"--url", url, "--ca-file", caFile, "--tag", "order"}, io.Discard, token)
	assert.ErrorContains(t, err, "403 Forbidden: permission denied: client \"sample\" lacks scope segment:order")
}
