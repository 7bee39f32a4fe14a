package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/tlstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/restserver"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// newServer is the server-rest handler in-process, on 127.0.0.1: machine
// 78, tag "order" in segment mode on SQLite. It is built from the
// libraries, not from a configuration, so that this test links neither
// the configuration loader nor what it configures (etcd, pgx).
func newServer(t *testing.T, opts ...restserver.Option) (*restserver.Server, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	start := func(ctx context.Context) (restserver.Service, error) {
		return service.New(ctx, service.Settings{Machine: 78, GenMethod: intf.GenMethodREST, DataDir: dir, Logger: quiet})
	}
	open := func(ctx context.Context) (restserver.Segments, error) {
		st, err := sqlitestore.Open(ctx, filepath.Join(dir, "segments.db"))
		if err != nil {
			return nil, err
		}
		if err := st.Init(ctx); err != nil {
			return nil, errors.Join(err, st.Close())
		}
		tags, _ := segspec.ParseTags("order") // as --segment-tags order
		if _, err := segment.EnsureTags(ctx, st, tags); err != nil {
			return nil, errors.Join(err, st.Close())
		}
		g, err := segment.New(ctx, segment.Settings{Store: st, Logger: quiet})
		if err != nil { // the Generator owns the store only once made
			return nil, errors.Join(err, st.Close())
		}
		return g, nil
	}
	srv := restserver.New(start, append([]restserver.Option{restserver.WithSegments(open), restserver.WithLogger(quiet)}, opts...)...)
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
	require.NoError(t, run(context.Background(), []string{"--url", ts.URL + "/", "-n", "3"}, &out, ""))
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
	require.NoError(t, run(context.Background(), []string{"--url", ts.URL, "-n", "3", "--tag", "order"}, &out, ""))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4, out.String())
	assert.Equal(t, "segment order: 1 2 3", lines[3])

	err := run(context.Background(), []string{"--url", ts.URL, "--tag", "coupon"}, io.Discard, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
	assert.Contains(t, err.Error(), "unknown segment tag")
}

func TestRunReportsServerErrors(t *testing.T) {
	_, ts := newServer(t) // never started: the ID endpoints answer 503
	err := run(context.Background(), []string{"--url", ts.URL}, io.Discard, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), "starting")
}

func TestRunReportsBadInput(t *testing.T) {
	srv, ts := newServer(t)
	require.NoError(t, srv.Start(context.Background()))
	err := run(context.Background(), []string{"--url", ts.URL, "-n", "0"}, io.Discard, "")
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
	certs, err := tlsserve.Load(tlsserve.Files{Cert: files.Cert, Key: files.Key})
	require.NoError(t, err)
	const token = "vesta_sample-rest-token"
	p, err := access.NewPolicy([]access.Client{{Name: "sample", Tokens: [][32]byte{access.HashToken(token)},
		Scopes: []access.Scope{"genid", "decode"}}})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv, _ := newServer(t, restserver.WithTLS(certs), restserver.WithGuard(g))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	<-srv.Ready()
	url := "https://" + ln.Addr().String()
	caFile, tokenFile := filepath.Join(dir, "root.pem"), filepath.Join(dir, "sample.token")
	tlstest.WriteFile(t, caFile, ca.PEM)
	tlstest.WriteFile(t, tokenFile, []byte(token+"\n"))

	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"--url", url, "--ca-file", caFile, "--token-file", tokenFile}, &out, ""))
	assert.Contains(t, out.String(), "machine=78")
	require.NoError(t, run(context.Background(), []string{"--url", url, "--ca-file", caFile}, &out, token), "$VESTA_TOKEN")
	err = run(context.Background(), []string{"--url", url, "--ca-file", caFile}, io.Discard, "")
	assert.ErrorContains(t, err, "401 Unauthorized: unauthenticated: no token")
	err = run(context.Background(), []string{"--url", url, "--ca-file", caFile, "--tag", "order"}, io.Discard, token)
	assert.ErrorContains(t, err, "403 Forbidden: permission denied: client \"sample\" lacks scope segment:order")
}
