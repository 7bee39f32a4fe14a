package main

import (
	"context"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/app"
	"github.com/vesta-go/vesta/internal/restapp"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/restserver"
	"github.com/vesta-go/vesta/service/config"
)

// newServer is a server-rest in-process, on 127.0.0.1, with machine 78.
func newServer(t *testing.T, opts ...restserver.Option) (*restserver.Server, *httptest.Server) {
	t.Helper()
	p := app.Program{Name: "sample-test", Defaults: config.Defaults{Listen: "127.0.0.1:0", GenMethod: intf.GenMethodREST},
		Stdout: io.Discard, Stderr: io.Discard}
	cfg, _, err := p.Setup([]string{"--machine", "78", "--data-dir", t.TempDir(), "--segment-tags", "order"})
	require.NoError(t, err)
	srv := restapp.New(cfg, opts...)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		require.NoError(t, srv.Close())
	})
	return srv, ts
}

func TestRun(t *testing.T) {
	srv, ts := newServer(t)
	require.NoError(t, srv.Start(context.Background()))

	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"--url", ts.URL + "/", "-n", "3"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Regexp(t, `^genid: \d+$`, lines[0])
	batch := regexp.MustCompile(`^batch of 3: (\d+) \d+ \d+$`).FindStringSubmatch(lines[1])
	require.NotNil(t, batch, lines[1])
	assert.Regexp(t, `^expid `+batch[1]+`: machine=78 seq=\d+ time=\d+ \(\d{4}-\d\d-\d\dT[0-9:.]+Z\) genMethod=2 type=0 \(max-peak\) version=0$`, lines[2])
}

func TestRunSegment(t *testing.T) {
	srv, ts := newServer(t)
	require.NoError(t, srv.Start(context.Background()))
	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"--url", ts.URL, "-n", "3", "--tag", "order"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4, out.String())
	assert.Equal(t, "segment order: 1 2 3", lines[3])

	err := run(context.Background(), []string{"--url", ts.URL, "--tag", "coupon"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
	assert.Contains(t, err.Error(), "unknown segment tag")
}

func TestRunReportsServerErrors(t *testing.T) {
	_, ts := newServer(t) // never started: the ID endpoints answer 503
	err := run(context.Background(), []string{"--url", ts.URL}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), "starting")
}

func TestRunReportsBadInput(t *testing.T) {
	srv, ts := newServer(t)
	require.NoError(t, srv.Start(context.Background()))
	err := run(context.Background(), []string{"--url", ts.URL, "-n", "0"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400")
	assert.Contains(t, err.Error(), "parameter count")
}
