package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/tlstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
)

var adminLine = regexp.MustCompile(`msg="vesta: admin listening" addr=(\S+)`)

// adminAddr is where p's admin listener listens, from its log (written
// before "listening").
func (p *rpcProcess) adminAddr(t *testing.T) string {
	t.Helper()
	m := adminLine.FindStringSubmatch(p.log.String())
	require.NotNil(t, m, "no admin listener in the log:\n%s", p.log.String())
	return m[1]
}

// httpGet returns the status and body of url, with a bearer token unless
// token is "".
func httpGet(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err, url)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// metric is the value of the sample named exactly series (with its
// labels in Prometheus' order) in a /metrics text, or fails.
func metric(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("no sample %s in /metrics", series)
	return 0
}

// The admin listener of the real binary: health, readiness, the core's
// metrics under server-rest's names, and the RPC calls counted by method
// and code as they happen.
func TestAdminListener(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	p := startRPC(t, bin, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--machine", "3",
		"--data-dir", t.TempDir(), "--segment-tags", "order", "--max-batch", "100")
	base := "http://" + p.adminAddr(t)
	hc := &http.Client{Timeout: 10 * time.Second}

	code, body := httpGet(t, hc, base+"/healthz", "")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"ok"}`, body)
	code, body = httpGet(t, hc, base+"/readyz", "")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"ready"}`, body)

	_, before := httpGet(t, hc, base+"/metrics", "")
	assert.Equal(t, 1.0, metric(t, before, "vesta_ready"))
	assert.Equal(t, 3.0, metric(t, before, "vesta_machine_id"))
	assert.Equal(t, 1.0, metric(t, before, "vesta_machine_lease_held"))
	assert.Equal(t, 0.0, metric(t, before, `vesta_rpc_calls_total{code="ok",method="GenId"}`))
	assert.Equal(t, float64(1<<20), metric(t, before, "vesta_ids_capacity_per_second"), "max-peak: 2^20 a second")
	assert.Greater(t, metric(t, before, "vesta_high_water_mark_timestamp_seconds"), float64(time.Now().Unix()-60))

	c, err := client.New([]string{p.addr})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 3 {
		_, err := c.GenId(ctx)
		require.NoError(t, err)
	}
	_, err = c.GenIds(ctx, 5)
	require.NoError(t, err)
	_, err = c.GenIds(ctx, 101)
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	_, err = c.NextIds(ctx, "order", 4)
	require.NoError(t, err)
	_, err = c.NextIds(ctx, "coupon", 1)
	require.ErrorIs(t, err, intf.ErrUnknownTag)

	_, after := httpGet(t, hc, base+"/metrics", "")
	for series, want := range map[string]float64{
		`vesta_rpc_calls_total{code="ok",method="GenId"}`:                     3,
		`vesta_rpc_calls_total{code="ok",method="GenIds"}`:                    1,
		`vesta_rpc_calls_total{code="invalid_argument",method="GenIds"}`:      1,
		`vesta_rpc_calls_total{code="ok",method="SegmentNextIds"}`:            1,
		`vesta_rpc_calls_total{code="unknown_tag",method="SegmentNextIds"}`:   1,
		`vesta_rpc_call_duration_seconds_count{method="GenId"}`:               3,
		`vesta_rpc_call_duration_seconds_count{method="GenIds"}`:              2,
		`vesta_ids_issued_total{type="max-peak"}`:                             8,
		`vesta_segment_ids_issued_total{tag="order"}`:                         4,
		`vesta_rpc_connections_refused_total{reason="per_ip"}`:                0,
		`vesta_rpc_connections_closed_total{reason="too_big"}`:                0,
		`vesta_http_requests_total{code="200",route="/genid"}` + "\x00absent": 0,
	} {
		if name, absent := strings.CutSuffix(series, "\x00absent"); absent {
			assert.NotContains(t, after, name, "server-rest's HTTP series are not server-rpc's")
			continue
		}
		assert.Equal(t, want, metric(t, after, series), series)
	}
	assert.GreaterOrEqual(t, metric(t, after, "vesta_rpc_connections_open"), 1.0)
	assert.GreaterOrEqual(t, metric(t, after, "vesta_rpc_connections_accepted_total"), 1.0)
	assert.Greater(t, metric(t, after, `vesta_rpc_call_duration_seconds_sum{method="GenIds"}`), 0.0)
	assert.Greater(t, metric(t, after, `vesta_segment_ids_buffered{tag="order"}`), 0.0)

	// The status page, as server-rest serves it.
	code, body = httpGet(t, hc, base+"/status", "")
	require.Equal(t, http.StatusOK, code, body)
	var st struct {
		Server, State string
		Machine       struct{ Id int64 }
		Ids           struct{ Issued uint64 }
		Segments      struct{ State string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.Equal(t, "rpc", st.Server)
	assert.Equal(t, "ready", st.State)
	assert.Equal(t, int64(3), st.Machine.Id)
	assert.Equal(t, uint64(8), st.Ids.Issued, "the Vesta IDs of GenId and GenIds")
	assert.Equal(t, "open", st.Segments.State)
	code, body = httpGet(t, hc, base+"/ui", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<html")

	// A path it does not serve: JSON, as every error of the product.
	code, body = httpGet(t, hc, base+"/nope", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.JSONEq(t, `{"error":"no such endpoint: use /healthz, /readyz, /metrics, /status, /ui"}`, body)

	require.NoError(t, c.Close())
	log := p.stop(t)
	assert.Contains(t, log, `msg="vesta: stopped" server=rpc`)
}

// With TLS and an auth file, the admin listener speaks TLS only and
// /metrics needs the metrics scope; the probes stay open.
func TestAdminListenerSecure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "server CA")
	files := tlstest.Write(t, dir, ca.Server(t), nil)
	const tokMetrics, tokIds = "vesta_prometheus-token", "vesta_ids-only-token"
	auth := filepath.Join(dir, "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(fmt.Sprintf(`clients:
  - name: prometheus
    tokenSHA256: %s
    scopes: [metrics]
  - name: app
    tokenSHA256: %s
    scopes: [genid]
`, access.HashTokenHex(tokMetrics), access.HashTokenHex(tokIds))), 0o600))
	p := startRPC(t, bin, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--machine", "4",
		"--data-dir", t.TempDir(), "--tls-cert", files.Cert, "--tls-key", files.Key, "--auth-file", auth)
	addr := p.adminAddr(t)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlstest.ClientConfig(ca, nil)}}
	base := "https://" + addr

	code, _ := httpGet(t, hc, base+"/healthz", "")
	assert.Equal(t, http.StatusOK, code, "probes need no token")
	code, _ = httpGet(t, hc, base+"/readyz", "")
	assert.Equal(t, http.StatusOK, code)
	code, body := httpGet(t, hc, base+"/metrics", "")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	code, _ = httpGet(t, hc, base+"/metrics", "vesta_guessed")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, body = httpGet(t, hc, base+"/metrics", tokIds)
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, `"scope":"metrics"`)
	code, body = httpGet(t, hc, base+"/metrics", tokMetrics)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, 4.0, metric(t, body, "vesta_machine_id"))
	assert.Equal(t, 1.0, metric(t, body, `vesta_auth_refusals_total{reason="scope"}`))
	assert.Contains(t, body, "vesta_tls_cert_not_after_timestamp_seconds")
	code, _ = httpGet(t, hc, base+"/status", "")
	assert.Equal(t, http.StatusUnauthorized, code, "/status needs the metrics scope, as /metrics")
	code, _ = httpGet(t, hc, base+"/status", tokIds)
	assert.Equal(t, http.StatusForbidden, code)
	code, body = httpGet(t, hc, base+"/status", tokMetrics)
	assert.Equal(t, http.StatusOK, code, body)
	code, _ = httpGet(t, hc, base+"/ui", "")
	assert.Equal(t, http.StatusOK, code, "the page holds no data: open")

	code, body = httpGet(t, &http.Client{Timeout: 10 * time.Second}, "http://"+addr+"/healthz", "")
	assert.Equal(t, http.StatusBadRequest, code, "plain HTTP to the TLS admin port is told to use https, as on the REST port")
	assert.Contains(t, body, "use https://")
	var err error
	_, err = (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}).Get(base + "/healthz")
	assert.Error(t, err, "a certificate the client does not trust")

	log := p.stop(t)
	for _, tok := range []string{tokMetrics, tokIds, "vesta_guessed"} {
		assert.NotContains(t, log, tok, "tokens are never logged")
	}
}

// /readyz turns 503 "fenced" when the machine id lease can no longer be
// renewed (etcd stopped past the lease's TTL), as server-rest's does; the
// liveness probe stays 200, so the node is taken out of rotation, not
// restarted.
func TestAdminReadyzFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc, runs etcd")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	etcd, err := etcdtest.Start(t.TempDir())
	require.NoError(t, err)
	stopEtcd := sync.OnceFunc(etcd.Close)
	defer stopEtcd()
	endpoint := etcd.Clients[0].Addr().String()
	p := startRPC(t, bin, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--machine-provider", "etcd", "--etcd-endpoints", endpoint, "--etcd-lease-ttl", "2s", "--etcd-dial-timeout", "3s") // a loaded machine (the suite runs etcd and PostgreSQL beside it) can take over a second to answer the first request, which is fatal at start
	base := "http://" + p.adminAddr(t)
	hc := &http.Client{Timeout: 10 * time.Second}
	// The lease marks itself held a moment after the service is up; with a
	// 2 s TTL a loaded machine may also see it fenced for a moment then.
	code, body := httpGet(t, hc, base+"/readyz", "")
	for deadline := time.Now().Add(10 * time.Second); code != http.StatusOK && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		code, body = httpGet(t, hc, base+"/readyz", "")
	}
	require.Equal(t, http.StatusOK, code, body)
	var m string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, m = httpGet(t, hc, base+"/metrics", "")
		if metric(t, m, "vesta_machine_lease_held") == 1 || time.Now().After(deadline) {
			break
		}
	}
	require.Equal(t, 1.0, metric(t, m, "vesta_machine_lease_held"))

	stopEtcd() // no renewal from now: fenced within the TTL
	require.Eventually(t, func() bool {
		code, _ := httpGet(t, hc, base+"/readyz", "")
		return code == http.StatusServiceUnavailable
	}, 30*time.Second, 50*time.Millisecond, "readyz turns 503 once the lease can no longer be renewed")
	code, body = httpGet(t, hc, base+"/readyz", "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, `"status":"fenced"`)
	code, _ = httpGet(t, hc, base+"/healthz", "")
	assert.Equal(t, http.StatusOK, code, "alive while fenced")
	_, m = httpGet(t, hc, base+"/metrics", "")
	assert.Equal(t, 0.0, metric(t, m, "vesta_ready"))
	assert.Equal(t, 0.0, metric(t, m, "vesta_machine_lease_held"))

	c, err := client.New([]string{p.addr}, client.WithCallTimeout(2*time.Second))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.GenId(context.Background())
	require.ErrorIs(t, err, intf.ErrUnavailable, "fenced travels as unavailable (code 6)")
	_, m = httpGet(t, hc, base+"/metrics", "")
	assert.GreaterOrEqual(t, metric(t, m, `vesta_rpc_calls_total{code="unavailable",method="GenId"}`), 1.0,
		"a fenced call is counted under its code")
}
