package restserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// stuckService is the real service whose ID calls block until their
// context ends: only the server's bound can end them.
type stuckService struct{ restserver.Service }

func (stuckService) GenId(ctx context.Context) (intf.Id, error) { <-ctx.Done(); return 0, ctx.Err() }
func (stuckService) GenIds(ctx context.Context, _ int) ([]intf.Id, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// stuckSegments blocks segment calls the same way.
type stuckSegments struct{ restserver.Segments }

func (stuckSegments) NextId(ctx context.Context, _ string) (int64, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}
func (stuckSegments) NextIds(ctx context.Context, _ string, _ int) ([]int64, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Every ID path ends at callTimeout with 503, Retry-After and an error
// naming the bound.
func TestCallTimeoutBoundsIdRequests(t *testing.T) {
	cfg := testConfig(t, "--call-timeout", "30ms", "--segment-tags", "order")
	require.Equal(t, 30*time.Millisecond, cfg.CallTimeout)
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		svc, err := restapp.Start(cfg)(ctx)
		return stuckService{svc}, err
	}
	open := func(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
		seg, err := restapp.OpenSegments(cfg)(ctx)
		return stuckSegments{seg}, err
	}
	_, ts := startServerWith(t, cfg, start, withSegments(cfg, open))
	for _, path := range []string{"/genid", "/genid?count=5", "/segment/order", "/segment/order?count=5"} {
		began := time.Now()
		r := get(t, ts.URL+path)
		assert.GreaterOrEqual(t, time.Since(began), 30*time.Millisecond, "%s: not before the bound", path)
		require.Equal(t, 503, r.status, "%s: %s", path, r.body)
		assert.Equal(t, "1", r.header.Get("Retry-After"), path)
		msg, _ := jsonError(t, r)
		assert.Equal(t, "request timed out: no IDs within the server's callTimeout of 30ms; retry", msg, path)
	}
	assert.Equal(t, 200, get(t, ts.URL+"/expid?id=1").status, "the pure endpoints are not affected")
}

// A request stuck on the service does not hold a shutdown beyond the
// shutdown timeout, however long callTimeout is: Close ends it.
func TestStuckCallDoesNotHoldShutdown(t *testing.T) {
	cfg := testConfig(t, "--call-timeout", "10m")
	entered := make(chan struct{}, 1)
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		svc, err := restapp.Start(cfg)(ctx)
		if err != nil {
			return nil, err
		}
		return &closingStuck{Service: svc, entered: entered, closed: make(chan struct{})}, nil
	}
	srv := newServer(cfg, start, restserver.WithShutdownTimeout(50*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	base, done := serve(t, ctx, srv)
	<-srv.Ready()
	answered := make(chan response, 1)
	go func() {
		r, err := fetch("GET", base+"/genid", nil, nil)
		if err != nil {
			r = response{body: err.Error()}
		}
		answered <- r
	}()
	<-entered
	cancel()
	select {
	case err := <-done:
		// Serve says the shutdown timeout cut a request short.
		if err != nil {
			assert.Contains(t, err.Error(), "http shutdown")
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return with a call stuck")
	}
	<-answered // the stuck call ended too (an error, or a closed connection)
}

// closingStuck blocks GenId until its context ends or it is closed, as the
// real service ends its waiters on Close.
type closingStuck struct {
	restserver.Service
	entered chan struct{}
	closed  chan struct{}
}

func (c *closingStuck) GenId(ctx context.Context) (intf.Id, error) {
	c.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-c.closed:
		return 0, context.Canceled
	}
}

func (c *closingStuck) Close() error {
	close(c.closed)
	return c.Service.Close()
}
