package rpcplugin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/syncbuf"
)

// The plugin's socket speaks mutual TLS with certificates go-plugin made
// for this host alone: another process on the machine that finds the
// socket gets nothing from it, with or without TLS.
func TestPluginSocketNeedsTheHostsCertificate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	var logs syncbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The TLS keys from the environment (which a TCP server may share; as
	// flags they are refused) are ignored, with a warning.
	p, err := Launch(ctx, bin, Config{DataDir: t.TempDir(), LogOutput: &logs,
		Env: []string{"VESTA_TLS_CERT=/nonexistent/cert.pem", "VESTA_TLS_KEY=/nonexistent/key.pem"}})
	require.NoError(t, err, "plugin mode ignores the TCP server's TLS files: %s", logs.String())
	defer p.Close()
	_, err = p.GenId(ctx)
	require.NoError(t, err, "the host's own connection works")

	rc := p.pc.ReattachConfig()
	require.NotNil(t, rc)
	addr := rc.Addr

	// The socket speaks TLS (the plugin presents a certificate), and a
	// client without the host's certificate is refused.
	var presented bool
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, addr.Network(), addr.String(), &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // the point: even a client trusting anything is refused
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			presented = len(raw) > 0
			return nil
		},
	})
	if err == nil {
		require.NoError(t, tc.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = tc.Read(make([]byte, 1)) // TLS 1.3: the refusal comes with the first read
		tc.Close()
	}
	assert.True(t, presented, "the plugin's socket speaks TLS")
	assert.Error(t, err, "a TLS client without the host's certificate is refused")
	assert.Contains(t, logs.String(), "ignored", "the TLS keys are said to be ignored in plugin mode")
}
