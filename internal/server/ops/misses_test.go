package ops_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/ops"
)

// What the surface does not serve is answered in JSON with "error", as
// every other error: an unknown path 404 naming the endpoints, another
// method on an endpoint 405; HEAD and a path to be cleaned keep their
// usual answers.
func TestMissesAreJSON(t *testing.T) {
	h, err := ops.New(ops.Options{
		Readiness: func() coremetrics.Health { return coremetrics.Health{Status: coremetrics.StatusReady} },
		Metrics:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "m 1\n") }),
		Page:      page(),
	})
	require.NoError(t, err)
	for _, c := range []struct {
		method, path string
		code         int
		want         string
	}{
		{http.MethodGet, "/nope", http.StatusNotFound, "no such endpoint: use /healthz, /readyz, /metrics, /status, /ui"},
		{http.MethodGet, "/", http.StatusNotFound, "no such endpoint"},
		{http.MethodGet, "/metrics/x", http.StatusNotFound, "no such endpoint"},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, "method not allowed: every endpoint takes GET"},
		{http.MethodDelete, "/metrics", http.StatusMethodNotAllowed, "method not allowed"},
		{http.MethodPost, "/nope", http.StatusNotFound, "no such endpoint"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		assert.Equal(t, c.code, rec.Code, "%s %s", c.method, c.path)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%s %s", c.method, c.path)
		var body struct{ Error string }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "%s %s: %q", c.method, c.path, rec.Body.String())
		assert.Contains(t, body.Error, c.want, "%s %s", c.method, c.path)
		if c.code == http.StatusMethodNotAllowed {
			assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/healthz", nil))
	assert.Equal(t, http.StatusOK, rec.Code, "HEAD is GET without the body")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "//healthz", nil))
	assert.Equal(t, 3, rec.Code/100, "an unclean path is still redirected to its clean form")
	assert.Equal(t, "/healthz", rec.Header().Get("Location"))
}
