package restserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// testConfig loads a configuration through the one loader, as server-rest
// does, with a private data dir and a port chosen by the kernel.
func testConfig(t testing.TB, args ...string) config.Config {
	t.Helper()
	return testConfigLog(t, io.Discard, args...)
}

func testConfigLog(t testing.TB, log io.Writer, args ...string) config.Config {
	t.Helper()
	p := app.Program{
		Name:     "server-rest-test",
		Defaults: config.Defaults{Listen: "127.0.0.1:0", GenMethod: intf.GenMethodREST},
		Stdout:   io.Discard,
		Stderr:   log,
	}
	cfg, _, err := p.Setup(append([]string{"--data-dir", t.TempDir()}, args...))
	require.NoError(t, err)
	return cfg
}

// cfgStart and cfgOpen replace, in a test, the ID service or segment mode
// that server-rest builds from a configuration.
type (
	cfgStart func(ctx context.Context, cfg config.Config) (restserver.Service, error)
	cfgOpen  func(ctx context.Context, cfg config.Config) (restserver.Segments, error)
)

// newServer is server-rest's server of cfg (restapp), its ID service made
// by start when start is not nil.
func newServer(cfg config.Config, start cfgStart, opts ...restserver.Option) *restserver.Server {
	if start == nil {
		return restapp.New(cfg, opts...)
	}
	f := func(ctx context.Context) (restserver.Service, error) { return start(ctx, cfg) }
	return restserver.New(f, append(restapp.Options(cfg), opts...)...)
}

// withSegments serves the segment mode open makes of cfg.
func withSegments(cfg config.Config, open cfgOpen) restserver.Option {
	return restserver.WithSegments(func(ctx context.Context) (restserver.Segments, error) { return open(ctx, cfg) })
}

// startServer returns a ready server (ID service constructed) behind an
// httptest server on 127.0.0.1.
func startServer(t testing.TB, cfg config.Config, opts ...restserver.Option) (*restserver.Server, *httptest.Server) {
	t.Helper()
	return startServerWith(t, cfg, nil, opts...)
}

// startServerWith is startServer with the ID service made by start.
func startServerWith(t testing.TB, cfg config.Config, start cfgStart, opts ...restserver.Option) (*restserver.Server, *httptest.Server) {
	t.Helper()
	srv := newServer(cfg, start, opts...)
	require.NoError(t, srv.Start(context.Background()))
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		require.NoError(t, srv.Close())
	})
	return srv, ts
}

// serve runs srv.Serve on a fresh 127.0.0.1 listener and returns the base
// URL and a channel with Serve's result.
func serve(t *testing.T, ctx context.Context, srv *restserver.Server) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), done
}

// response is what a test sees of an HTTP answer.
type response struct {
	status int
	ctype  string
	body   string
	header http.Header
}

// fetch does one request and checks the answer against docs/openapi.yaml
// (conform), so that every test of the package keeps the document true;
// it is safe to call from any goroutine.
func fetch(method, url string, header http.Header, body io.Reader) (response, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, url, body)
	if err != nil {
		return response{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: string(b), header: resp.Header}
	if err != nil {
		return r, err
	}
	_, err = conform(exchange{req: req, status: resp.StatusCode, header: resp.Header, body: b})
	return r, err
}

func do(t *testing.T, method, url string, header http.Header, body io.Reader) response {
	t.Helper()
	r, err := fetch(method, url, header, body)
	require.NoError(t, err)
	return r
}

func get(t *testing.T, url string) response { t.Helper(); return do(t, http.MethodGet, url, nil, nil) }

func getJSON(t *testing.T, url string) response {
	t.Helper()
	return do(t, http.MethodGet, url, http.Header{"Accept": {"application/json"}}, nil)
}

// serveInProcess answers one GET without the network, e.g. while the
// listener is already closed during shutdown.
func serveInProcess(srv *restserver.Server, path string) response {
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return response{status: rec.Code, ctype: rec.Header().Get("Content-Type"), body: rec.Body.String(), header: rec.Header()}
}

func jsonUnmarshal(body string, v any) error { return json.Unmarshal([]byte(body), v) }

// jsonError decodes an error body: {"error": ..., "param": ...}.
func jsonError(t *testing.T, r response) (msg, param string) {
	t.Helper()
	require.True(t, strings.HasPrefix(r.ctype, "application/json"), "error content type %q, body %s", r.ctype, r.body)
	var e struct {
		Error string `json:"error"`
		Param string `json:"param"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &e), r.body)
	require.NotEmpty(t, e.Error)
	require.NoError(t, jsonEndsInNewline(r.ctype, []byte(r.body)))
	return e.Error, e.Param
}
