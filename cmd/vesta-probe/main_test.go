package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/tlstest"
)

func probeArgs(args ...string) (int, string) {
	var stderr bytes.Buffer
	code := run(args, &stderr)
	return code, stderr.String()
}

func TestProbe(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"fenced"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()

	code, _ := probeArgs(srv.URL + "/healthz")
	assert.Equal(t, 0, code)
	ready = false
	code, msg := probeArgs(srv.URL + "/readyz")
	assert.Equal(t, 1, code)
	assert.Contains(t, msg, "503 Service Unavailable")
	assert.Contains(t, msg, "fenced", "the body names the state")

	srv.Close()
	code, _ = probeArgs(srv.URL + "/healthz")
	assert.Equal(t, 1, code, "nothing listens")
}

func TestProbeTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "probe CA")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	pair := ca.Server(t)
	srv.TLS = tlstest.ClientConfig(ca, &pair) // the pair as the server's certificate
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.PEM, 0o600))

	code, msg := probeArgs(srv.URL + "/healthz")
	assert.Equal(t, 1, code, "an unknown CA is refused")
	assert.Contains(t, msg, "certificate")
	code, msg = probeArgs("-ca", caFile, "-server-name", "localhost", srv.URL+"/healthz")
	assert.Equal(t, 0, code, msg)
}

func TestProbeBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"a", "b"},
		{"127.0.0.1:8080/healthz"},
		{"ftp://x/healthz"},
		{"-timeout", "0", "http://127.0.0.1:1/healthz"},
		{"-ca", "/nonexistent", "https://127.0.0.1:1/healthz"},
	} {
		code, msg := probeArgs(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, msg, "vesta-probe", "%v", args)
	}
}
