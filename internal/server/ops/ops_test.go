package ops_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/ops"
	"github.com/vesta-go/vesta/internal/server/statuspage"
)

func page() statuspage.Options {
	return statuspage.Options{
		Service: func() statuspage.Service { return nil },
		Issued:  func() uint64 { return 0 },
		Server:  "test",
	}
}

func get(t *testing.T, h http.Handler, path, token string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header(), string(body)
}

// Every endpoint, its readiness and its auth: /metrics and /status behind
// the metrics scope, the probes and the page open.
func TestSurface(t *testing.T) {
	var ready atomic.Bool
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "vesta_ready 1\n") })
	p, err := access.NewPolicy([]access.Client{
		{Name: "ops", Tokens: [][32]byte{access.HashToken("vesta_ops")}, Scopes: []access.Scope{access.ScopeMetrics}},
		{Name: "app", Tokens: [][32]byte{access.HashToken("vesta_app")}, Scopes: []access.Scope{access.ScopeGenId}},
	})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p})
	require.NoError(t, err)
	h, err := ops.New(ops.Options{
		Readiness: func() coremetrics.Health {
			if ready.Load() {
				return coremetrics.Health{Status: coremetrics.StatusReady}
			}
			return coremetrics.Health{Status: coremetrics.StatusStarting, Error: "starting"}
		},
		Metrics: metrics, Page: page(), Guard: g,
	})
	require.NoError(t, err)

	code, _, body := get(t, h, "/healthz", "")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"ok"}`, body)
	code, hdr, body := get(t, h, "/readyz", "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "1", hdr.Get("Retry-After"))
	assert.JSONEq(t, `{"status":"starting","error":"starting"}`, body)
	ready.Store(true)
	code, _, _ = get(t, h, "/readyz", "")
	assert.Equal(t, http.StatusOK, code)

	code, hdr, body = get(t, h, "/metrics", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, `Bearer realm="vesta"`, hdr.Get("WWW-Authenticate"))
	assert.Contains(t, body, `"header":"Authorization"`)
	code, hdr, _ = get(t, h, "/metrics", "vesta_app")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, hdr.Get("WWW-Authenticate"), `scope="metrics"`)
	code, _, body = get(t, h, "/metrics", "vesta_ops")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "vesta_ready 1\n", body)
	code, _, _ = get(t, h, "/status", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _, body = get(t, h, "/status", "vesta_ops")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"state":"ready"`)
	code, _, body = get(t, h, "/ui", "")
	assert.Equal(t, http.StatusOK, code, "the page holds no data")
	assert.True(t, strings.HasPrefix(body, "<!DOCTYPE html>") || strings.Contains(body, "<html"), body[:min(len(body), 80)])

	for _, path := range ops.Paths {
		code, _, _ := get(t, h, path, "vesta_ops")
		assert.Equal(t, http.StatusOK, code, path)
	}
	_, err = ops.New(ops.Options{Page: page()})
	assert.Error(t, err, "Readiness and Metrics are required")
}

func ExampleNew() {
	h, err := ops.New(ops.Options{
		Readiness: func() coremetrics.Health { return coremetrics.Health{Status: coremetrics.StatusReady} },
		Metrics:   http.NotFoundHandler(), // a server passes promhttp.HandlerFor(its registry, ...)
		Page: statuspage.Options{
			Service: func() statuspage.Service { return nil },
			Issued:  func() uint64 { return 0 },
			Server:  "example",
		},
	})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ops.PathReadyz, nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output: 200 {"status":"ready"}
}
