package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/tlstest"
)

// listenAddr is the address p listens on, from its log.
func (p *process) listenAddr(t *testing.T) string {
	t.Helper()
	select {
	case addr := <-p.addr:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("server-rest did not listen; log:\n%s", p.logText())
		return ""
	}
}

// waitReadyWith returns once base/readyz answers 200 to client.
func waitReadyWith(t *testing.T, p *process, client *http.Client, base string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 10*time.Millisecond, "readyz; log:\n%s", p.logText())
}

func httpsClient(cfg *tls.Config, keepAlive bool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 16}}
}

// answer is a response's status, headers and body.
type answer struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, client *http.Client, url string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(t, err, url)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header, string(body)}
}

// jsonField reads one string field of a JSON error body.
func jsonField(t *testing.T, body, field string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	s, _ := m[field].(string)
	return s
}

// metric returns the value of one series in a /metrics text, "" if absent.
func metric(text, series string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

func TestTLSThroughTheBinary(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "server CA")
	files := tlstest.Write(t, t.TempDir(), ca.Server(t), nil)
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "31", "--data-dir", t.TempDir(),
		"--tls-cert", files.Cert, "--tls-key", files.Key)
	addr := p.listenAddr(t)
	base := "https://" + addr
	client := httpsClient(tlstest.ClientConfig(ca, nil), true)
	waitReadyWith(t, p, client, base)

	a := do(t, client, base+"/genid?count=3")
	require.Equal(t, http.StatusOK, a.code, a.body)
	assert.Len(t, strings.Fields(a.body), 3)

	// Plain HTTP to the TLS port: a readable refusal, counted.
	resp, err := http.Get("http://" + addr + "/genid")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "this port speaks TLS: use https://", jsonField(t, string(body), "error"))

	// TLS 1.1 and a client that does not trust the certificate: refused.
	old := tlstest.ClientConfig(ca, nil)
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	_, err = httpsClient(old, false).Get(base + "/genid")
	require.Error(t, err)
	_, err = httpsClient(tlstest.ClientConfig(tlstest.NewCA(t, "other"), nil), false).Get(base + "/genid")
	require.Error(t, err)

	require.Eventually(t, func() bool {
		m := do(t, client, base+"/metrics").body
		return metric(m, `vesta_tls_handshake_failures_total{reason="not_tls"}`) == "1" &&
			metric(m, `vesta_tls_handshake_failures_total{reason="protocol"}`) == "1" &&
			metric(m, `vesta_tls_handshake_failures_total{reason="peer_refused"}`) == "1"
	}, 10*time.Second, 10*time.Millisecond)
	m := do(t, client, base+"/metrics").body
	assert.NotEmpty(t, metric(m, "vesta_tls_cert_not_after_timestamp_seconds"))
	assert.Contains(t, p.logText(), "vesta: TLS on")
	assert.Contains(t, p.logText(), "tls: handshake failed")
	p.stop(t)
}

func TestMutualTLSThroughTheBinary(t *testing.T) {
	t.Parallel()
	ca, clientCA := tlstest.NewCA(t, "server CA"), tlstest.NewCA(t, "client CA")
	files := tlstest.Write(t, t.TempDir(), ca.Server(t), clientCA)
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "32", "--data-dir", t.TempDir(),
		"--tls-cert", files.Cert, "--tls-key", files.Key, "--tls-client-ca", files.ClientCA)
	base := "https://" + p.listenAddr(t)
	me := clientCA.Client(t, "orders")
	client := httpsClient(tlstest.ClientConfig(ca, &me), true)
	waitReadyWith(t, p, client, base)
	assert.Equal(t, http.StatusOK, do(t, client, base+"/genid").code)

	for _, cfg := range []*tls.Config{
		tlstest.ClientConfig(ca, nil), // no certificate
		tlstest.ClientConfig(ca, func() *tlstest.Pair { c := tlstest.NewCA(t, "other").Client(t, "x"); return &c }()),
		// Signed by the trusted CA but without clientAuth in its extended
		// key usage (none at all, which Go's verifier takes for any use).
		tlstest.ClientConfig(ca, func() *tlstest.Pair {
			c := clientCA.Client(t, "no-eku", tlstest.Options{NoExtKeyUsage: true})
			return &c
		}()),
	} {
		_, err := httpsClient(cfg, false).Get(base + "/readyz")
		require.Error(t, err, "refused in the handshake, even for the health checks")
	}
	require.Eventually(t, func() bool {
		m := do(t, client, base+"/metrics").body
		return metric(m, `vesta_tls_handshake_failures_total{reason="no_client_cert"}`) == "1" &&
			metric(m, `vesta_tls_handshake_failures_total{reason="bad_client_cert"}`) == "2"
	}, 10*time.Second, 10*time.Millisecond)
	p.stop(t)
}

// load runs requests against url with client from n goroutines until
// stop is closed, and returns how many succeeded and the failures.
func load(client *http.Client, url string, n int, header http.Header, stop <-chan struct{}) (ok *atomic.Int64, errs func() []error, wait func()) {
	ok = new(atomic.Int64)
	var mu sync.Mutex
	var failed []error
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header = header.Clone()
				resp, err := client.Do(req)
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("%d %s", resp.StatusCode, body)
					}
				}
				if err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		})
	}
	return ok, func() []error { mu.Lock(); defer mu.Unlock(); return append([]error(nil), failed...) }, wg.Wait
}

// servedSerial is the serial number of the certificate the server
// presents to a new connection.
func servedSerial(t *testing.T, addr string, ca *tlstest.CA) *big.Int {
	t.Helper()
	c, err := tls.Dial("tcp", addr, tlstest.ClientConfig(ca, nil))
	require.NoError(t, err)
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

// Renewed certificate files are picked up while requests go on, on new
// connections and on kept-alive ones, and none of them fails: by the
// file watch, and with the watch off, by SIGHUP.
func TestCertReloadUnderLoad(t *testing.T) {
	t.Parallel()
	for _, viaSignal := range []bool{false, true} {
		t.Run(map[bool]string{false: "file change", true: "SIGHUP"}[viaSignal], func(t *testing.T) {
			t.Parallel()
			ca := tlstest.NewCA(t, "server CA")
			first := ca.Server(t)
			files := tlstest.Write(t, t.TempDir(), first, nil)
			interval := "50ms"
			if viaSignal {
				interval = "0" // only SIGHUP reloads
			}
			p := start(t, "--listen", "127.0.0.1:0", "--machine", "33", "--data-dir", t.TempDir(),
				"--tls-cert", files.Cert, "--tls-key", files.Key, "--reload-interval", interval)
			addr := p.listenAddr(t)
			base := "https://" + addr
			cfg := tlstest.ClientConfig(ca, nil)
			readyClient, freshClient, keptClient := httpsClient(cfg, true), httpsClient(cfg, false), httpsClient(cfg, true)
			waitReadyWith(t, p, readyClient, base)
			require.Equal(t, first.Leaf.SerialNumber, servedSerial(t, addr, ca))

			stop := make(chan struct{})
			fresh, freshErrs, waitFresh := load(freshClient, base+"/genid", 4, nil, stop)
			kept, keptErrs, waitKept := load(keptClient, base+"/genid?count=10", 4, nil, stop)
			require.Eventually(t, func() bool { return fresh.Load() > 20 && kept.Load() > 20 }, 30*time.Second, time.Millisecond)

			second := ca.Server(t)
			tlstest.WriteFile(t, files.Key, second.KeyPEM) // one file at a time, as a renewal may
			tlstest.WriteFile(t, files.Cert, second.CertPEM)
			if viaSignal {
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
			}
			require.Eventually(t, func() bool { return servedSerial(t, addr, ca).Cmp(second.Leaf.SerialNumber) == 0 },
				30*time.Second, 10*time.Millisecond, "the new certificate is served; log:\n%s", p.logText())
			before := fresh.Load() + kept.Load()
			require.Eventually(t, func() bool { return fresh.Load()+kept.Load() > before+40 }, 30*time.Second, time.Millisecond)
			close(stop)
			waitFresh()
			waitKept()
			assert.Empty(t, freshErrs(), "no request on a new connection failed")
			assert.Empty(t, keptErrs(), "no request on a kept-alive connection failed")
			assert.Contains(t, p.logText(), "vesta: reloaded")
			// A keep-alive transport may hold a spare connection it dialed
			// for a request that another one served: the server sees it
			// as new, never used, and its graceful stop waits 5 s for it
			// (net/http). Close them, as a client that is done would.
			for _, c := range []*http.Client{readyClient, freshClient, keptClient} {
				c.CloseIdleConnections()
			}
			p.stop(t)
		})
	}
}

const (
	tokOrders = "vesta_orders-token-for-e2e"
	tokOps    = "vesta_ops-token-for-e2e"
	tokBulk   = "vesta_bulk-token-for-e2e"
)

func authFile(entries ...string) string {
	return "clients:\n" + strings.Join(entries, "")
}

func client(name, token, scopes string, extra ...string) string {
	return fmt.Sprintf("  - name: %s\n    tokenSHA256: %s\n    scopes: [%s]\n%s", name, access.HashTokenHex(token), scopes,
		strings.Join(extra, ""))
}

func TestAuthThroughTheBinary(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte(authFile(
		client("orders", tokOrders, `genid, "segment:order"`),
		client("ops", tokOps, `decode, metrics, "segment:*"`),
		client("bulk", tokBulk, "genid", "    rate: 1\n    burst: 1000\n"), // refills an ID a second: no race with the clock
	)), 0o600))
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "34", "--data-dir", t.TempDir(), "--auth-file", path,
		"--segment-tags", "order,invoice")
	base := p.waitReady(t) // /readyz needs no token
	c := http.DefaultClient
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	assert.Equal(t, http.StatusOK, do(t, c, base+"/healthz").code)
	a := do(t, c, base+"/genid")
	assert.Equal(t, http.StatusUnauthorized, a.code)
	assert.Equal(t, `Bearer realm="vesta"`, a.header.Get("WWW-Authenticate"))
	assert.Equal(t, "Authorization", jsonField(t, a.body, "header"))
	assert.Contains(t, jsonField(t, a.body, "error"), "no token")

	a = do(t, c, base+"/genid", bearer("vesta_guessed")...)
	assert.Equal(t, http.StatusUnauthorized, a.code)
	assert.Equal(t, `Bearer realm="vesta", error="invalid_token"`, a.header.Get("WWW-Authenticate"))
	assert.NotContains(t, a.body, "vesta_guessed")

	a = do(t, c, base+"/genid", "Authorization", "Basic b3JkZXJzOnB3")
	assert.Equal(t, http.StatusUnauthorized, a.code)
	assert.Contains(t, jsonField(t, a.body, "error"), "want the Bearer scheme")
	a = do(t, c, base+"/genid", "Authorization", "Bearer "+tokOrders+" extra")
	assert.Equal(t, http.StatusBadRequest, a.code)
	assert.Equal(t, `Bearer realm="vesta", error="invalid_request"`, a.header.Get("WWW-Authenticate"))
	a = do(t, c, base+"/genid", "Authorization", "Bearer "+strings.Repeat("x", 5000))
	assert.Equal(t, http.StatusBadRequest, a.code)
	assert.Contains(t, jsonField(t, a.body, "error"), "over 4096 bytes")
	a = do(t, c, base+"/genid", "Authorization", "Bearer "+tokOrders, "Authorization", "Bearer "+tokOps)
	assert.Equal(t, http.StatusBadRequest, a.code)

	// A NUL in the token cannot be sent by net/http: a raw request.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	_, err = io.WriteString(conn, "GET /genid HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\x00def\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	raw, _ := io.ReadAll(bufio.NewReader(conn))
	conn.Close()
	assert.True(t, strings.HasPrefix(string(raw), "HTTP/1.1 400 "), "%s", raw)
	assert.NotContains(t, string(raw), "500")

	// Scopes.
	a = do(t, c, base+"/genid?count=5", bearer(tokOrders)...)
	require.Equal(t, http.StatusOK, a.code, a.body)
	id := strings.Fields(a.body)[0]
	a = do(t, c, base+"/expid?id="+id, bearer(tokOrders)...)
	assert.Equal(t, http.StatusForbidden, a.code)
	assert.Equal(t, "decode", jsonField(t, a.body, "scope"))
	assert.Contains(t, jsonField(t, a.body, "error"), `client "orders" lacks scope decode`)
	assert.Equal(t, `Bearer realm="vesta", error="insufficient_scope", scope="decode"`, a.header.Get("WWW-Authenticate"))
	assert.Equal(t, http.StatusOK, do(t, c, base+"/expid?id="+id, bearer(tokOps)...).code)
	assert.Equal(t, http.StatusForbidden, do(t, c, base+"/genid", bearer(tokOps)...).code)
	assert.Equal(t, http.StatusOK, do(t, c, base+"/segment/order", bearer(tokOrders)...).code)
	a = do(t, c, base+"/segment/invoice", bearer(tokOrders)...)
	assert.Equal(t, http.StatusForbidden, a.code)
	assert.Equal(t, "segment:invoice", jsonField(t, a.body, "scope"))
	assert.Equal(t, http.StatusOK, do(t, c, base+"/segment/invoice", bearer(tokOps)...).code)
	list := do(t, c, base+"/segment", bearer(tokOrders)...)
	assert.Contains(t, list.body, `"tag":"order"`)
	assert.NotContains(t, list.body, "invoice", "a client sees only its tags")
	assert.Equal(t, http.StatusForbidden, do(t, c, base+"/segment", bearer(tokBulk)...).code)

	// Metrics need the metrics scope.
	assert.Equal(t, http.StatusUnauthorized, do(t, c, base+"/metrics").code)
	assert.Equal(t, http.StatusForbidden, do(t, c, base+"/metrics", bearer(tokOrders)...).code)

	// Quotas count IDs: bulk's 1000 go in one batch; 1000 more wait for
	// the bucket to refill, 1,000 s at 1 ID/s, however slow the machine
	// runs between the two calls.
	a = do(t, c, base+"/genid?count=1000", bearer(tokBulk)...)
	require.Equal(t, http.StatusOK, a.code, a.body)
	a = do(t, c, base+"/genid?count=1000", bearer(tokBulk)...)
	require.Equal(t, http.StatusTooManyRequests, a.code, a.body)
	wait, err := strconv.Atoi(a.header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", a.header.Get("Retry-After"))
	assert.True(t, wait > 900 && wait <= 1000, "Retry-After %d s: the bucket refills 1 ID/s", wait)
	assert.Contains(t, jsonField(t, a.body, "error"), `client "bulk" is over its quota of 1 IDs/s (burst 1000)`)

	m := do(t, c, base+"/metrics", bearer(tokOps)...)
	require.Equal(t, http.StatusOK, m.code)
	assert.Equal(t, "6", metric(m.body, `vesta_client_ids_issued_total{client="orders"}`), "5 IDs and 1 segment ID")
	assert.Equal(t, "1000", metric(m.body, `vesta_client_ids_issued_total{client="bulk"}`))
	assert.Equal(t, "1", metric(m.body, `vesta_client_refusals_total{client="bulk",reason="rate_limited"}`))
	assert.Equal(t, "1", metric(m.body, `vesta_auth_refusals_total{reason="unknown_token"}`))
	assert.Equal(t, "2", metric(m.body, `vesta_auth_refusals_total{reason="no_token"}`), "/genid and /metrics")
	assert.Equal(t, "1", metric(m.body, `vesta_auth_refusals_total{reason="oversized"}`))
	assert.Equal(t, "1", metric(m.body, `vesta_auth_refusals_total{reason="bad_scheme"}`))
	assert.Equal(t, "3", metric(m.body, `vesta_auth_clients`))
	assert.Contains(t, m.body, `vesta_http_requests_total{code="429",route="/genid"} 1`)

	p.stop(t)
	log := p.logText()
	for _, tok := range []string{tokOrders, tokOps, tokBulk, "vesta_guessed"} {
		assert.NotContains(t, log, tok, "tokens are never logged")
	}
	assert.Contains(t, log, "access: call refused")
	assert.Contains(t, log, "auth file loaded")
}

// The auth file is rewritten while a client drives the server: the new
// client works once the file is read, the old one never fails, and a
// broken file leaves the old one in force with an error in the log.
func TestAuthFileReloadUnderLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auth.yaml")
	write := func(s string) { tlstest.WriteFile(t, path, []byte(s)) }
	write(authFile(client("orders", tokOrders, "genid")))
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "35", "--data-dir", t.TempDir(), "--auth-file", path,
		"--reload-interval", "20ms")
	base := p.waitReady(t)
	stop := make(chan struct{})
	ok, errs, wait := load(&http.Client{Timeout: 10 * time.Second}, base+"/genid?count=10", 4,
		http.Header{"Authorization": {"Bearer " + tokOrders}}, stop)
	require.Eventually(t, func() bool { return ok.Load() > 50 }, 30*time.Second, time.Millisecond)

	write(authFile(client("orders", tokOrders, "genid"), client("ops", tokOps, "decode, metrics")))
	require.Eventually(t, func() bool {
		return getWith(base+"/metrics", "Authorization", "Bearer "+tokOps) == http.StatusOK
	}, 30*time.Second, 10*time.Millisecond, "the new client is let in")

	write("clients:\n  - name: orders\n    tokenSHA256: [\n")
	require.Eventually(t, func() bool { return strings.Contains(p.logText(), "reload failed") }, 30*time.Second, 10*time.Millisecond)
	n := ok.Load()
	require.Eventually(t, func() bool { return ok.Load() > n+50 }, 30*time.Second, time.Millisecond)
	assert.Equal(t, http.StatusOK, getWith(base+"/metrics", "Authorization", "Bearer "+tokOps), "the old file stays in force")
	close(stop)
	wait()
	assert.Empty(t, errs(), "no request failed while the file changed")
	log := p.logText()
	assert.Contains(t, log, "line 3", "the broken line is named")
	assert.Equal(t, 1, strings.Count(log, "reload failed"), "a broken file is logged once")
	var metrics string
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tokOps)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metrics = string(b)
	assert.Equal(t, "1", metric(metrics, `vesta_auth_file_loads_total{result="error"}`))
	assert.Equal(t, "2", metric(metrics, `vesta_auth_file_loads_total{result="ok"}`))
	p.stop(t)
}

func getWith(url string, header ...string) int {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestBadSecurityFilesStopTheStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte("clients:\n  - name: orders\n    tokenSHA256: not-a-digest\n"), 0o600))
	ca := tlstest.NewCA(t, "ca")
	files := tlstest.Write(t, dir, ca.Server(t), nil)
	otherKey := filepath.Join(dir, "other.key")
	require.NoError(t, os.WriteFile(otherKey, ca.Server(t).KeyPEM, 0o600))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth-file", auth}, "config key authFile: auth file " + auth + ": line 3: client 1 (orders): tokenSHA256"},
		{[]string{"--auth-file", filepath.Join(dir, "none.yaml")}, "no such file or directory"},
		{[]string{"--tls-cert", files.Cert, "--tls-key", otherKey}, "config key tlsKey: tls private key file " + otherKey + ": does not go with"},
		{[]string{"--tls-cert", files.Cert}, "config key tlsKey"},
	} {
		p := start(t, append([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, c.args...)...)
		code, log := p.exitOf(t)
		assert.NotEqual(t, 0, code, "%v", c.args)
		assert.Contains(t, log, c.want, "%v", c.args)
		assert.NotContains(t, log, "BEGIN", "no key material in the log")
	}
}

func TestRateLimitPerAddressThroughTheBinary(t *testing.T) {
	t.Parallel()
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "36", "--data-dir", t.TempDir(),
		// One ID in 1,000 s: a loaded machine cannot refill the bucket between
		// the burst and the next call, so the refusal does not race the clock.
		"--rate-limit", "0.001", "--rate-burst", "100")
	base := p.waitReady(t)
	assert.Equal(t, http.StatusOK, getWith(base+"/genid?count=100"))
	a := do(t, http.DefaultClient, base+"/genid")
	assert.Equal(t, http.StatusTooManyRequests, a.code)
	// The ID the bucket lacks takes 1,000 s less what elapsed since the burst.
	after, err := strconv.Atoi(a.header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", a.header.Get("Retry-After"))
	assert.True(t, after > 900 && after <= 1000, "Retry-After %d", after)
	assert.Contains(t, jsonField(t, a.body, "error"), "this address is over its quota")
	assert.Equal(t, http.StatusOK, getWith(base+"/expid?id=1"), "decoding takes no IDs")
	m := do(t, http.DefaultClient, base+"/metrics")
	assert.Equal(t, http.StatusOK, m.code, "without an auth file /metrics stays open")
	assert.Equal(t, "1", metric(m.body, `vesta_auth_refusals_total{reason="rate_limited"}`))
	p.stop(t)
}

func TestExposedWithoutTLSOrTokensWarns(t *testing.T) {
	t.Parallel()
	p := start(t, "--listen", "0.0.0.0:0", "--machine", "37", "--data-dir", t.TempDir())
	addr := p.listenAddr(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	waitReadyWith(t, p, http.DefaultClient, "http://127.0.0.1:"+port)
	log := p.logText()
	assert.Equal(t, 1, strings.Count(log, "listening on an address other hosts can reach"))
	assert.Contains(t, log, "no TLS")
	assert.Contains(t, log, "no auth file")
	p.stop(t)

	p = start(t, "--listen", "127.0.0.1:0", "--machine", "37", "--data-dir", t.TempDir())
	p.waitReady(t)
	p.stop(t)
	assert.NotContains(t, p.logText(), "other hosts can reach", "loopback only: nothing to warn about")
}
