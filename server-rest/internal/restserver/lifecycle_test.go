package restserver_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
	"github.com/vesta-go/vesta/service"
)

// hookedService is the real service with GenIds wrapped in a hook.
type hookedService struct {
	*service.Service
	genIds func(ctx context.Context, n int) ([]intf.Id, error)
}

func (h *hookedService) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	return h.genIds(ctx, n)
}

func TestNotReadyUntilServiceStarts(t *testing.T) {
	release := make(chan struct{})
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		select { // as service.New waiting for the clock to pass the mark
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return restapp.Start(cfg)(ctx)
	}
	srv := newServer(testConfig(t, "--machine", "78"), start)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := serve(t, ctx, srv)

	r := get(t, base+"/genid")
	require.Equal(t, 503, r.status)
	msg, _ := jsonError(t, r)
	assert.Contains(t, msg, "starting")
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Equal(t, 503, get(t, base+"/makeid?"+workedQuery).status)
	assert.Equal(t, 400, get(t, base+"/makeid?time=x&seq=0").status, "bad input is a 400 even while starting")
	r = get(t, base+"/readyz")
	assert.Equal(t, 503, r.status)
	assert.JSONEq(t, `{"status":"starting","error":"`+mustErrorText(t, r)+`"}`, r.body)
	assert.Equal(t, "1", r.header.Get("Retry-After"), "every 503 says when to retry, /readyz's too")
	assert.Equal(t, 200, get(t, base+"/healthz").status)
	assert.Equal(t, 0.0, metricValue(t, get(t, base+"/metrics").body, "vesta_ready"))

	close(release)
	<-srv.Ready()
	assert.Equal(t, 200, get(t, base+"/readyz").status)
	assert.Equal(t, 200, get(t, base+"/genid").status)
	cancel()
	require.NoError(t, <-done)
}

func mustErrorText(t *testing.T, r response) string {
	t.Helper()
	msg, _ := jsonError(t, r)
	return msg
}

func TestGracefulShutdown(t *testing.T) {
	cfg := testConfig(t, "--machine", "78")
	entered, release := make(chan struct{}), make(chan struct{})
	var real *service.Service
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		svc, err := service.New(ctx, cfg.Service)
		if err != nil {
			return nil, err
		}
		real = svc
		return &hookedService{Service: svc, genIds: func(ctx context.Context, n int) ([]intf.Id, error) {
			close(entered) // the request is in flight ...
			<-release      // ... until the test lets it go
			return svc.GenIds(ctx, n)
		}}, nil
	}
	srv := newServer(cfg, start)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := serve(t, ctx, srv)
	<-srv.Ready()

	type result struct {
		r   response
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		r, err := fetch("GET", base+"/genid?count=5", nil, nil)
		inflight <- result{r, err}
	}()
	<-entered
	cancel() // shutdown begins with the request in flight

	require.Eventually(t, func() bool { return serveInProcess(srv, "/readyz").status == 503 }, 10*time.Second, time.Millisecond)
	assert.Contains(t, serveInProcess(srv, "/readyz").body, `"status":"stopping"`)
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) while a request was in flight", err)
	default:
	}

	close(release)
	res := <-inflight
	require.NoError(t, res.err)
	require.Equal(t, 200, res.r.status, "the in-flight request completes")
	require.Len(t, parseLines(t, res.r.body), 5)
	require.NoError(t, <-done)

	_, err := real.GenId(context.Background())
	require.ErrorIs(t, err, intf.ErrClosed, "the service is closed after shutdown")
	assert.Equal(t, 503, serveInProcess(srv, "/genid").status)
	assert.FileExists(t, filepath.Join(cfg.Service.DataDir, "highwater"))
}

func TestStartFailureStopsServe(t *testing.T) {
	boom := errors.New("clock far behind")
	start := func(context.Context, config.Config) (restserver.Service, error) { return nil, boom }
	srv := newServer(testConfig(t), start)
	_, done := serve(t, context.Background(), srv)
	err := <-done
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 503, serveInProcess(srv, "/readyz").status)
}

func TestCancelWhileStartingIsCleanExit(t *testing.T) {
	entered := make(chan struct{})
	start := func(ctx context.Context, _ config.Config) (restserver.Service, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	srv := newServer(testConfig(t), start)
	ctx, cancel := context.WithCancel(context.Background())
	_, done := serve(t, ctx, srv)
	<-entered
	cancel()
	require.NoError(t, <-done)
}

func TestServiceErrorsAreJSON(t *testing.T) {
	var next struct {
		sync.Mutex
		err   error
		panic bool
	}
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		svc, err := service.New(ctx, cfg.Service)
		if err != nil {
			return nil, err
		}
		return &hookedService{Service: svc, genIds: func(context.Context, int) ([]intf.Id, error) {
			next.Lock()
			defer next.Unlock()
			if next.panic {
				panic("handler bug")
			}
			return nil, next.err
		}}, nil
	}
	_, ts := startServerWith(t, testConfig(t), start)
	cases := []struct {
		err    error
		panic  bool
		status int
		msg    string
	}{
		{err: intf.ErrNotPersisted, status: 503, msg: "not persisted"},
		{err: intf.ErrClosed, status: 503, msg: "closed"},
		{err: intf.ErrUnavailable, status: 503, msg: "unavailable"},
		{err: intf.ErrTimeOverflow, status: 503, msg: "time field"},
		{err: intf.ErrClockBehind, status: 503, msg: "clock"},
		{err: context.Canceled, status: 503, msg: "cancelled"},
		{err: &intf.FieldError{Field: "count", Value: 0, Min: 1, Max: 9}, status: 400, msg: "1..9"},
		{err: errors.New("disk on fire at /secret/path"), status: 500, msg: "internal error"},
		{panic: true, status: 500, msg: "internal error"},
	}
	for _, tc := range cases {
		next.Lock()
		next.err, next.panic = tc.err, tc.panic
		next.Unlock()
		r := get(t, ts.URL+"/genid?count=2")
		require.Equal(t, tc.status, r.status, "%v: %s", tc.err, r.body)
		msg, _ := jsonError(t, r)
		assert.Contains(t, msg, tc.msg)
		assert.NotContains(t, msg, "/secret/path", "internal details stay in the log")
		if tc.status == 503 {
			assert.Equal(t, "1", r.header.Get("Retry-After"))
		}
	}
	assert.Equal(t, 200, get(t, ts.URL+"/healthz").status, "still serving after a panic")
}

func TestDefaultMachineWarns(t *testing.T) {
	var log syncbuf.Buffer
	startServer(t, testConfigLog(t, &log))
	assert.Contains(t, log.String(), "machine id 0 is the default")

	var quiet syncbuf.Buffer
	startServer(t, testConfigLog(t, &quiet, "--machine", "5"))
	assert.NotContains(t, quiet.String(), "machine id 0 is the default")
	assert.True(t, strings.Contains(quiet.String(), "id service ready"), quiet.String())
}
