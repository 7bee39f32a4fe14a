package statuspage_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/statuspage"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
)

// clock is the page's clock, moved by the test.
type clock struct{ now atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *clock) advance(d time.Duration) { c.now.Add(int64(d)) }

// fixture is a page over a real service (no data dir) and a counter the
// test sets.
type fixture struct {
	page   *statuspage.Page
	svc    *service.Service
	issued atomic.Uint64
	clock  *clock
}

func newFixture(t *testing.T, typ intf.IdType) *fixture {
	t.Helper()
	svc, err := service.New(context.Background(), service.Settings{Machine: 9, Type: typ, NoDataDir: true,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	f := &fixture{svc: svc, clock: &clock{}}
	f.clock.now.Store(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC).UnixNano())
	f.page, err = statuspage.New(statuspage.Options{
		Service: func() statuspage.Service { return svc },
		Issued:  f.issued.Load,
		State:   func() (string, string) { return "ready", "" },
		Server:  "rest", Build: "v9", Type: typ,
		MachineProvider: "property", MachineSource: "flag --machine",
		Now: f.clock.Now,
	})
	require.NoError(t, err)
	return f
}

func TestRateAndBudget(t *testing.T) {
	f := newFixture(t, intf.MaxPeak)
	st := f.page.Snapshot()
	assert.Zero(t, st.Ids.PerSecond, "one sample: no rate yet")
	assert.Zero(t, st.Ids.WindowSeconds)

	f.issued.Store(524_288)
	f.clock.advance(time.Second)
	st = f.page.Snapshot()
	assert.Equal(t, uint64(524_288), st.Ids.Issued)
	assert.Equal(t, 524_288.0, st.Ids.PerSecond)
	assert.Equal(t, 1.0, st.Ids.WindowSeconds)
	assert.Equal(t, 0.5, st.Ids.BudgetUsed, "half of 2^20 IDs/s")

	// Reads within the second (more tabs) take no sample: the rate is
	// still measured from the sample a second back.
	f.issued.Store(524_288 + 1000)
	f.clock.advance(500 * time.Millisecond)
	st = f.page.Snapshot()
	assert.Equal(t, 1.5, st.Ids.WindowSeconds)
	assert.InDelta(t, (524_288.0+1000)/1.5, st.Ids.PerSecond, 1e-6)

	f.clock.advance(500 * time.Millisecond) // a second after the last sample: a new one
	st = f.page.Snapshot()
	assert.Equal(t, 1.0, st.Ids.WindowSeconds)
	assert.Equal(t, 1000.0, st.Ids.PerSecond)
}

func TestSnapshotOfTheService(t *testing.T) {
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		f := newFixture(t, typ)
		st := f.page.Snapshot()
		assert.Equal(t, "ready", st.State)
		assert.Equal(t, "v9", st.Build)
		require.NotNil(t, st.Machine.Id)
		assert.Equal(t, int64(9), *st.Machine.Id)
		assert.Nil(t, st.Machine.Lease)
		assert.Equal(t, typ.String(), st.Layout.Type)
		require.Len(t, st.Layouts, 2)
		assert.Equal(t, st.Layout, st.Layouts[typ])
		l, _ := typ.Layout()
		for i, fl := range l.Fields() {
			assert.Equal(t, statuspage.Field{Name: fl.Name, Shift: fl.Shift, Bits: fl.Bits}, st.Layout.Fields[i])
		}
		assert.Equal(t, intf.DefaultEpochMillis, st.Layout.EpochMillis)
		assert.Equal(t, map[intf.IdType]string{intf.MaxPeak: "2049-01-09T05:37:04.000Z", intf.MinGranularity: "2049-11-03T11:53:47.776Z"}[typ],
			st.Layout.Ends, "as docs/architecture.md's Lifetime says")
		assert.Equal(t, "lock", st.Settings.Populator)
		assert.Empty(t, st.Settings.DataDir, "noDataDir")
		assert.Zero(t, st.Clock.HighWaterMillis)
		assert.Zero(t, st.Clock.HighWaterAheadMillis, "no mark, nothing ahead")
		assert.InDelta(t, 0.35, st.Clock.LifetimeUsed, 0.01, "12 of 34 years")
		assert.Equal(t, statuspage.SegmentsOff, st.Segments.State)
		assert.NotNil(t, st.Segments.Tags, "an empty list, not null")
	}
}

func TestStarting(t *testing.T) {
	p, err := statuspage.New(statuspage.Options{
		Service: func() statuspage.Service { return nil },
		Issued:  func() uint64 { return 0 },
		State:   func() (string, string) { return "starting", "checking the clock" },
		Type:    intf.MinGranularity,
	})
	require.NoError(t, err)
	st := p.Snapshot()
	assert.Equal(t, "starting", st.State)
	assert.Nil(t, st.Machine.Id, "no machine id yet")
	assert.Nil(t, st.Settings)
	assert.Equal(t, "min-granularity", st.Layout.Type, "the configured type")
}

func TestNewRefusesMissingOptions(t *testing.T) {
	full := statuspage.Options{Service: func() statuspage.Service { return nil }, Issued: func() uint64 { return 0 },
		State: func() (string, string) { return "", "" }}
	for name, o := range map[string]statuspage.Options{
		"Service": {Issued: full.Issued, State: full.State},
		"Issued":  {Service: full.Service, State: full.State},
		"State":   {Service: full.Service, Issued: full.Issued},
	} {
		_, err := statuspage.New(o)
		assert.ErrorIs(t, err, statuspage.ErrOption, name)
		assert.ErrorContains(t, err, "Options."+name)
	}
	o := full
	o.Type = 2
	_, err := statuspage.New(o)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	var fe *intf.FieldError
	assert.True(t, errors.As(err, &fe))
}

func TestHandlers(t *testing.T) {
	f := newFixture(t, intf.MaxPeak)
	ts := httptest.NewServer(f.page.Handler())
	defer ts.Close()

	resp, err := http.Get(ts.URL + "/status")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.True(t, strings.HasSuffix(string(body), "}\n"), "one JSON document and a newline")
	var st statuspage.Status
	require.NoError(t, json.Unmarshal(body, &st))
	assert.Equal(t, int64(9), *st.Machine.Id)

	resp, err = http.Get(ts.URL + "/ui")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.NotContains(t, csp, "unsafe-inline", "the inline style and script run by their hashes only")
	assert.Contains(t, csp, "script-src 'sha256-")
	page := string(body)
	assert.Contains(t, page, "<svg")
	for _, external := range []string{"http://", "https://", "<link", "src="} {
		assert.NotContains(t, page, external, "no external assets: the page works offline")
	}

	resp, err = http.Post(ts.URL+"/status", "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
}

// BenchmarkStatus is the cost of one /status document (one browser tab
// reads one a second).
func BenchmarkStatus(b *testing.B) {
	svc, err := service.New(context.Background(), service.Settings{NoDataDir: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	defer svc.Close()
	p, err := statuspage.New(statuspage.Options{Service: func() statuspage.Service { return svc },
		Issued: func() uint64 { return 1 }, State: func() (string, string) { return "ready", "" }})
	require.NoError(b, err)
	h := p.StatusHandler()
	req := httptest.NewRequest(http.MethodGet, "/status", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// With provider ips the page names this host's address: the one at the
// machine id's index.
func TestMachineFromTheIPList(t *testing.T) {
	hostAddrs := func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("10.0.0.3"), Mask: net.CIDRMask(8, 32)}}, nil
	}
	svc, err := service.New(context.Background(), service.Settings{NoDataDir: true, Logger: slog.New(slog.DiscardHandler),
		MachineProvider: machineid.IPList{IPs: []string{"10.0.0.1", "10.0.0.2", " 10.0.0.3"}, HostAddrs: hostAddrs}})
	require.NoError(t, err)
	defer svc.Close()
	p, err := statuspage.New(statuspage.Options{Service: func() statuspage.Service { return svc },
		Issued: func() uint64 { return 0 }, State: func() (string, string) { return "ready", "" },
		MachineProvider: "ips", MachineSource: "flag --ips"})
	require.NoError(t, err)
	m := p.Snapshot().Machine
	require.NotNil(t, m.Id)
	assert.Equal(t, int64(2), *m.Id)
	assert.Equal(t, "10.0.0.3", m.IP)
	assert.Equal(t, "ips", m.Provider)
	assert.Equal(t, "flag --ips", m.Source)
}
