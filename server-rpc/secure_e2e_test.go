package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/internal/tlstest"
	"github.com/vesta-go/vesta/intf"
)

// rpcProcess is a running server-rpc whose stderr is collected.
type rpcProcess struct {
	cmd  *exec.Cmd
	log  syncbuf.Buffer
	addr string
	done chan struct{}
}

func startRPC(t *testing.T, bin string, args ...string) *rpcProcess {
	t.Helper()
	p := &rpcProcess{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		re := regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.log.Write([]byte(sc.Text() + "\n"))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatalf("server-rpc did not listen; log:\n%s", p.log.String())
	}
	return p
}

func (p *rpcProcess) stop(t *testing.T) string {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	<-p.done
	require.NoError(t, p.cmd.Wait(), "exit 0; log:\n%s", p.log.String())
	return p.log.String()
}

const (
	tokOrders = "vesta_rpc-orders-token"
	tokBulk   = "vesta_rpc-bulk-token"
)

// TLS, mutual TLS, tokens, scopes and quotas through the real binary and
// the Go client; the certificate is renewed under load (SIGHUP).
func TestSecureServerBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	dir := t.TempDir()
	ca, clientCA := tlstest.NewCA(t, "server CA"), tlstest.NewCA(t, "client CA")
	first := ca.Server(t)
	files := tlstest.Write(t, dir, first, clientCA)
	auth := filepath.Join(dir, "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(fmt.Sprintf(`clients:
  - name: orders
    tokenSHA256: %s
    scopes: [genid, "segment:order"]
  - name: bulk
    tokenSHA256: %s
    scopes: [genid]
    rate: 1
    burst: 10
`, access.HashTokenHex(tokOrders), access.HashTokenHex(tokBulk))), 0o600))
	p := startRPC(t, bin, "--listen", "127.0.0.1:0", "--machine", "11", "--data-dir", t.TempDir(),
		"--segment-tags", "order,invoice", "--tls-cert", files.Cert, "--tls-key", files.Key,
		"--tls-client-ca", files.ClientCA, "--auth-file", auth, "--reload-interval", "0")

	me := clientCA.Client(t, "orders-app")
	secure := client.WithTLS(tlstest.ClientConfig(ca, &me))
	newClient := func(opts ...client.Option) *client.Client {
		// A dial (with its TLS handshake) gets far more than the default
		// second: CI saw a handshake under -race on a loaded machine miss it.
		c, err := client.New([]string{p.addr}, append(opts, client.WithCallTimeout(3*time.Second), client.WithDialTimeout(10*time.Second))...)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	orders := newClient(secure, client.WithToken(tokOrders))
	ids, err := orders.GenIds(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(11), intf.Id(ids[0]).Fields().Machine)
	seg, err := orders.NextIds(ctx, "order", 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, seg)
	_, err = orders.NextIds(ctx, "invoice", 1)
	var se *intf.ScopeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, intf.ScopeError{Client: "orders", Scope: "segment:invoice"}, *se)
	_, err = orders.ExpId(ctx, ids[0])
	assert.ErrorIs(t, err, intf.ErrPermissionDenied)

	_, err = newClient(secure).GenId(ctx)
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)
	_, err = newClient(secure, client.WithToken("vesta_guessed")).GenId(ctx)
	assert.ErrorIs(t, err, intf.ErrUnauthenticated)
	_, err = newClient(client.WithToken(tokOrders)).GenId(ctx)
	assert.ErrorIs(t, err, intf.ErrUnavailable, "plain TCP to the TLS port")
	_, err = newClient(client.WithTLS(tlstest.ClientConfig(ca, nil)), client.WithToken(tokOrders)).GenId(ctx)
	assert.Error(t, err, "no client certificate")
	noEKU := clientCA.Client(t, "no-eku", tlstest.Options{NoExtKeyUsage: true})
	_, err = newClient(client.WithTLS(tlstest.ClientConfig(ca, &noEKU)), client.WithToken(tokOrders)).GenId(ctx)
	assert.Error(t, err, "a client certificate of the trusted CA without clientAuth")

	bulk := newClient(secure, client.WithToken(tokBulk))
	_, err = bulk.GenIds(ctx, 10)
	require.NoError(t, err)
	// 10 more IDs at 1/s fit in about 10 s, far past the 2 s deadline,
	// which still leaves a loaded machine time for the round trip.
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = bulk.GenIds(short, 10)
	cancelShort()
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "10 IDs at 1/s: a wait longer than the deadline is not waited")
	assert.Equal(t, "bulk", rl.Client)

	// The certificate is renewed while calls go on: SIGHUP (the file
	// watch is off), and not one call fails.
	var ok atomic.Int64
	var failed []error
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := orders.GenIds(ctx, 5); err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		})
	}
	require.Eventually(t, func() bool { return ok.Load() > 50 }, 30*time.Second, time.Millisecond)
	second := ca.Server(t)
	tlstest.WriteFile(t, files.Cert, second.CertPEM)
	tlstest.WriteFile(t, files.Key, second.KeyPEM)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	cfg := tlstest.ClientConfig(ca, &me)
	require.Eventually(t, func() bool {
		c, err := tls.Dial("tcp", p.addr, cfg)
		if err != nil {
			return false
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(second.Leaf.SerialNumber) == 0
	}, 30*time.Second, 10*time.Millisecond, "the new certificate is served")
	fresh := newClient(secure, client.WithToken(tokOrders))
	_, err = fresh.GenId(ctx)
	require.NoError(t, err, "a new connection gets the new certificate")
	n := ok.Load()
	require.Eventually(t, func() bool { return ok.Load() > n+50 }, 30*time.Second, time.Millisecond)
	close(stop)
	wg.Wait()
	assert.Empty(t, failed)

	log := p.stop(t)
	for _, tok := range []string{tokOrders, tokBulk, "vesta_guessed"} {
		assert.NotContains(t, log, tok, "tokens are never logged")
	}
	assert.Contains(t, log, "SIGHUP: reloading")
	assert.Contains(t, log, "TLS totals")
	// At least one each: the client may redial a refused server within
	// its call timeout (how often depends on timing).
	assert.Regexp(t, `no_client_cert:[1-9]`, log, "the handshake refusals are counted by reason")
	assert.Regexp(t, `not_tls:[1-9]`, log)
	assert.Contains(t, log, "scope:2", "the refused calls too")
}
