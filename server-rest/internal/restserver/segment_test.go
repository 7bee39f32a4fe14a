package restserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/segconfig"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// The table runs in order against one server: the IDs of a tag continue
// from case to case.
func TestSegmentEndpoints(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--segment-tags", "order,invoice:1000:500"))
	const text, js = "text/plain", "application/json"
	long := strings.Repeat("x", intf.MaxTagLen+1)
	cases := []endpointCase{
		{name: "first ID", path: "/segment/order", status: 200, ctype: text, want: "1"},
		{name: "JSON", path: "/segment/order", accept: js, status: 200, ctype: js, wantJSON: `{"id":"2"}`},
		{name: "batch text", path: "/segment/order?count=3", status: 200, ctype: text, want: "3\n4\n5\n"},
		{name: "batch JSON", path: "/segment/order?count=3", accept: js, status: 200, ctype: js, wantJSON: `["6","7","8"]`},
		{name: "unknown parameters ignored", path: "/segment/order?foo=1", status: 200, ctype: text, want: "9"},
		{name: "escaped tag unescaped once", path: "/segment/ord%65r", status: 200, ctype: text, want: "10"},
		{name: "another tag", path: "/segment/invoice", status: 200, ctype: text, want: "1000"},
		{name: "unknown tag", path: "/segment/coupon", status: 404, param: "tag", contains: []string{`"coupon"`, "unknown segment tag", "create-tag"}},
		{name: "tag with a space", path: "/segment/a%20b", status: 400, param: "tag", contains: []string{`"a b"`, "not allowed"}},
		{name: "tag with an escaped slash", path: "/segment/a%2Fb", status: 400, param: "tag", contains: []string{`"a/b"`, "not allowed"}},
		{name: "path below a tag", path: "/segment/a/b", status: 404, contains: []string{"no such endpoint"}},
		{name: "tag with a trailing slash", path: "/segment/order/", status: 404, contains: []string{"no such endpoint"}},
		{name: "tag not unescaped twice", path: "/segment/ord%2565r", status: 400, param: "tag", contains: []string{`"ord%65r"`}},
		{name: "tag too long", path: "/segment/" + long, status: 400, param: "tag", contains: []string{"longer than 128"}},
		{name: "bad tag before bad count", path: "/segment/a%20b?count=0", status: 400, param: "tag"},
		{name: "count 0", path: "/segment/order?count=0", status: 400, param: "count", contains: []string{"1..10000"}},
		{name: "count above maxBatch", path: "/segment/order?count=10001", status: 400, param: "count", contains: []string{"10001", "1..10000"}},
		{name: "count not a number", path: "/segment/order?count=ten", status: 400, param: "count", contains: []string{"not a decimal integer"}},
		{name: "count given twice", path: "/segment/order?count=1&count=2", status: 400, param: "count", contains: []string{"given 2 times"}},
		{name: "the failures issued nothing", path: "/segment/order", status: 200, ctype: text, want: "11"},
		{name: "no tag", path: "/segment/", status: 404, contains: []string{"/segment/{tag}"}},
		{name: "POST", method: http.MethodPost, path: "/segment/order", status: 405},
	}
	for _, tc := range cases {
		runEndpointCase(t, ts.URL, tc)
	}

	r := get(t, ts.URL+"/segment")
	require.Equal(t, 200, r.status)
	var list struct {
		Tags []struct {
			Tag                  string
			Current, Spare, Step int64
			DBStep               int64 `json:"dbStep"`
			LastLoad             string
			LoadFailing          bool
		}
	}
	require.NoError(t, jsonUnmarshal(r.body, &list), r.body)
	require.Len(t, list.Tags, 2)
	assert.Equal(t, "invoice", list.Tags[0].Tag)
	assert.Equal(t, "order", list.Tags[1].Tag)
	order := list.Tags[1]
	assert.Equal(t, int64(1000), order.DBStep)
	assert.Equal(t, int64(1000-11), order.Current, "11 of the first range of 1000 issued")
	assert.Equal(t, int64(500), list.Tags[0].DBStep)
	assert.False(t, order.LoadFailing)
	_, err := time.Parse(time.RFC3339, order.LastLoad)
	assert.NoError(t, err, order.LastLoad)
}

func TestSegmentMetrics(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--segment-tags", "order"))
	require.Equal(t, 200, get(t, ts.URL+"/segment/order").status)
	require.Equal(t, 200, get(t, ts.URL+"/segment/order?count=4").status)
	require.Equal(t, 404, get(t, ts.URL+"/segment/coupon").status)
	require.Equal(t, 400, get(t, ts.URL+"/segment/order?count=0").status)
	m := get(t, ts.URL+"/metrics").body

	assert.Equal(t, 5.0, metricValue(t, m, `vesta_segment_ids_issued_total{tag="order"}`))
	assert.Equal(t, 2.0, metricValue(t, m, `vesta_http_requests_total{code="200",route="/segment/{tag}"}`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_http_requests_total{code="404",route="/segment/{tag}"}`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_http_requests_total{code="400",route="/segment/{tag}"}`))
	assert.Equal(t, 4.0, metricValue(t, m, `vesta_http_request_duration_seconds_count{route="/segment/{tag}"}`))
	assert.GreaterOrEqual(t, metricValue(t, m, `vesta_segment_ids_buffered{tag="order"}`), float64(1000-5))
	assert.Equal(t, 0.0, metricValue(t, m, `vesta_segment_load_failing{tag="order"}`))
	assert.NotContains(t, m, "coupon", "unknown tags do not become labels")
}

func TestSegmentOff(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--segment-store", "off"))
	for _, path := range []string{"/segment/order", "/segment/order?count=5", "/segment"} {
		r := get(t, ts.URL+path)
		require.Equal(t, 404, r.status, path)
		msg, param := jsonError(t, r)
		assert.Equal(t, "segment mode is off (segmentStore: off)", msg)
		assert.Empty(t, param)
	}
	assert.Equal(t, 400, get(t, ts.URL+"/segment/a%20b").status, "a bad tag is a 400 even while off")
	assert.Equal(t, 200, get(t, ts.URL+"/readyz").status, "off is not unready")
	assert.Equal(t, 200, get(t, ts.URL+"/genid").status)
	assert.NotContains(t, get(t, ts.URL+"/metrics").body, "vesta_segment_ids_buffered{")
}

// flakyStore is a segment store that fails while down is set, as a
// database that stopped; it records whether it was closed.
type flakyStore struct {
	segstore.Store
	down   atomic.Bool
	closed atomic.Bool
}

// errDown names the database's address, as a driver's error does: it
// must reach the log, never a caller.
var errDown = errors.New("flaky store: failed to connect: 127.0.0.1:40231 (127.0.0.1): dial error: connection refused")

func (f *flakyStore) Alloc(ctx context.Context, tag string, step int64) (int64, int64, error) {
	if f.down.Load() {
		return 0, 0, errDown
	}
	return f.Store.Alloc(ctx, tag, step)
}

func (f *flakyStore) Tags(ctx context.Context) ([]segstore.TagInfo, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Tags(ctx)
}

func (f *flakyStore) Close() error {
	f.closed.Store(true)
	return f.Store.Close()
}

// flakySegments opens an SQLite store in the data dir with tags, wraps it
// in a flakyStore and runs a Generator with a fixed step on it.
func flakySegments(t *testing.T, tags ...segspec.Tag) (cfgOpen, *flakyStore, chan *segment.Generator) {
	st := &flakyStore{}
	gen := make(chan *segment.Generator, 1)
	open := func(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
		sc, err := segconfig.Stores(cfg)
		if err != nil {
			return nil, err
		}
		inner, err := stores.OpenStore(ctx, sc)
		if err != nil {
			return nil, err
		}
		if _, err := segstore.EnsureTags(ctx, inner, tags); err != nil {
			return nil, errors.Join(err, inner.Close())
		}
		st.Store = inner
		g, err := segment.New(ctx, segment.Settings{Store: st, MaxStep: 10, RetryInterval: time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return nil, errors.Join(err, inner.Close())
		}
		gen <- g
		return g, nil
	}
	return open, st, gen
}

// settle waits until tag has a spare range loaded.
func settle(t *testing.T, g *segment.Generator, tag string) {
	t.Helper()
	require.Eventually(t, func() bool {
		st, err := g.Status(tag)
		return err == nil && !st.Loading && st.Spare > 0
	}, 10*time.Second, time.Millisecond)
}

func TestSegmentDatabaseDown(t *testing.T) {
	open, st, gen := flakySegments(t, segspec.Tag{Tag: "t", MaxId: 1, Step: 10})
	var log syncbuf.Buffer
	cfg := testConfigLog(t, &log)
	srv, ts := startServer(t, cfg, withSegments(cfg, open))
	g := <-gen

	require.Equal(t, "1\n2\n3\n4\n5\n", get(t, ts.URL+"/segment/t?count=5").body)
	settle(t, g, "t")
	st.down.Store(true)
	require.Equal(t, 10, len(parseLines(t, get(t, ts.URL+"/segment/t?count=10").body)), "the buffers serve through the outage")
	require.Equal(t, "16\n17\n18\n19\n20\n", get(t, ts.URL+"/segment/t?count=5").body)

	r := get(t, ts.URL+"/segment/t")
	require.Equal(t, 503, r.status, r.body)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	msg, _ := jsonError(t, r)
	assert.Equal(t, "segment store unavailable: retry shortly", msg, "the store's failure is the log's, not the caller's")
	assert.NotContains(t, r.body, "127.0.0.1")
	assert.Contains(t, log.String(), "127.0.0.1:40231", "the log keeps the detail")
	assert.Contains(t, log.String(), "database cannot be reached")
	assert.Equal(t, 200, get(t, ts.URL+"/readyz").status, "segment trouble does not make the ID service unready")
	assert.Equal(t, 1.0, metricValue(t, get(t, ts.URL+"/metrics").body, `vesta_segment_load_failing{tag="t"}`))

	st.down.Store(false)
	require.Eventually(t, func() bool { return get(t, ts.URL+"/segment/t").status == 200 }, 10*time.Second, 5*time.Millisecond)
	r = get(t, ts.URL+"/segment/t?count=2")
	ids := parseLines(t, r.body)
	assert.Greater(t, ids[0], int64(20), "issuing resumes above every ID issued before")

	require.NoError(t, srv.Close())
	assert.True(t, st.closed.Load(), "Close closes segment mode")
	r = serveInProcess(srv, "/segment/t")
	assert.Equal(t, 503, r.status)
}

func TestSegmentTagUsedUp(t *testing.T) {
	open, _, _ := flakySegments(t, segspec.Tag{Tag: "full", MaxId: math.MaxInt64 - 5, Step: 5})
	cfg := testConfig(t)
	_, ts := startServer(t, cfg, withSegments(cfg, open))
	require.Len(t, parseLines(t, get(t, ts.URL+"/segment/full?count=5").body), 5)
	r := get(t, ts.URL+"/segment/full")
	require.Equal(t, 500, r.status, r.body)
	msg, _ := jsonError(t, r)
	assert.Contains(t, msg, "used up")
	assert.Contains(t, msg, `"full"`)
	assert.Empty(t, r.header.Get("Retry-After"), "no point retrying")
}

func TestSegmentsServeWhileTheIdServiceStarts(t *testing.T) {
	release := make(chan struct{})
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return restapp.Start(cfg)(ctx)
	}
	opening := make(chan struct{})
	open := func(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
		<-opening
		return restapp.OpenSegments(cfg)(ctx)
	}
	cfg := testConfig(t, "--segment-tags", "order")
	srv := newServer(cfg, start, withSegments(cfg, open))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := serve(t, ctx, srv)

	r := get(t, base+"/segment/order")
	require.Equal(t, 503, r.status)
	msg, _ := jsonError(t, r)
	assert.Contains(t, msg, "segment mode is starting")
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	r = get(t, base+"/readyz")
	assert.Equal(t, 503, r.status)
	assert.JSONEq(t, `{"status":"starting","error":"segment mode is starting (opening the segment store): retry shortly"}`, r.body)

	close(opening)
	require.Eventually(t, func() bool { return get(t, base+"/segment/order").status == 200 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, 503, get(t, base+"/genid").status, "the ID service is still starting")
	assert.Equal(t, 503, get(t, base+"/readyz").status)
	close(release)
	<-srv.Ready()
	assert.Equal(t, 200, get(t, base+"/readyz").status)
	cancel()
	require.NoError(t, <-done)
}

func TestSegmentOpenFailureStopsServe(t *testing.T) {
	boom := errors.New("no route to the database")
	var started atomic.Bool
	start := func(context.Context, config.Config) (restserver.Service, error) {
		started.Store(true)
		return nil, errors.New("not reached")
	}
	open := func(context.Context, config.Config) (restserver.Segments, error) { return nil, boom }
	cfg := testConfig(t)
	srv := newServer(cfg, start, withSegments(cfg, open))
	_, done := serve(t, context.Background(), srv)
	err := <-done
	require.ErrorIs(t, err, boom)
	assert.Equal(t, boom.Error(), err.Error(), "returned as the opener said it (internal/server/app's names segment mode): no prefix twice")
	assert.False(t, started.Load(), "the ID service is not started")
}
