package tlsserve_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/internal/tlstest"
)

// echoServer serves l: each connection echoes lines back. It returns
// the address.
func echoServer(t *testing.T, l *tlsserve.Listener) string {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			})
		}
	})
	return l.Addr().String()
}

func listen(t *testing.T, certs *tlsserve.Certs, o tlsserve.Options) *tlsserve.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return tlsserve.NewListener(ln, certs.ServerConfig(), o)
}

// roundTrip dials addr with cfg, sends a line and reads it back; it
// returns the connection's state.
func roundTrip(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return tls.ConnectionState{}, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return tls.ConnectionState{}, err
	}
	if line != "ping\n" {
		return tls.ConnectionState{}, errors.New("echo: " + line)
	}
	return c.ConnectionState(), nil
}

func failures(l *tlsserve.Listener, r tlsserve.Reason) func() bool {
	return func() bool { return l.Stats().Failures[r] == 1 }
}

func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "server CA")
	files := tlstest.Write(t, t.TempDir(), ca.Server(t), nil)
	certs, err := tlsserve.Load(tlsserve.Files{Cert: files.Cert, Key: files.Key})
	require.NoError(t, err)
	assert.False(t, certs.MutualTLS())
	l := listen(t, certs, tlsserve.Options{})
	addr := echoServer(t, l)

	st, err := roundTrip(addr, tlstest.ClientConfig(ca, nil))
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), st.Version)
	cfg12 := tlstest.ClientConfig(ca, nil)
	cfg12.MaxVersion = tls.VersionTLS12
	st, err = roundTrip(addr, cfg12)
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS12), st.Version)
	assert.Equal(t, uint64(2), l.Stats().Handshakes)

	// TLS 1.1, and TLS 1.2 with a CBC suite only: refused.
	old := tlstest.ClientConfig(ca, nil)
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	_, err = roundTrip(addr, old)
	require.Error(t, err)
	require.Eventually(t, failures(l, tlsserve.ReasonProtocol), 10*time.Second, time.Millisecond)
	cbc := tlstest.ClientConfig(ca, nil)
	cbc.MaxVersion, cbc.CipherSuites = tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}
	_, err = roundTrip(addr, cbc)
	require.Error(t, err)

	// A client that does not trust the certificate gives up with an alert.
	_, err = roundTrip(addr, tlstest.ClientConfig(tlstest.NewCA(t, "other"), nil))
	require.Error(t, err)
	require.Eventually(t, failures(l, tlsserve.ReasonPeerRefused), 10*time.Second, time.Millisecond)
}

func TestPlainTextToTheTLSPort(t *testing.T) {
	ca := tlstest.NewCA(t, "server CA")
	files := tlstest.Write(t, t.TempDir(), ca.Server(t), nil)
	certs, err := tlsserve.Load(tlsserve.Files{Cert: files.Cert, Key: files.Key})
	require.NoError(t, err)
	const reply = "HTTP/1.0 400 Bad Request\r\n\r\nthis port speaks TLS\n"
	l := listen(t, certs, tlsserve.Options{PlainHTTPReply: []byte(reply)})
	addr := echoServer(t, l)

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /genid HTTP/1.1\r\nHost: x\r\nUser-Agent: test\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, reply, string(got))
	assert.Equal(t, uint64(1), l.Stats().Failures[tlsserve.ReasonNotTLS])

	// Not HTTP (a gob client, say): closed without an answer.
	c2, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.Write([]byte{0x20, 0xff, 0x81, 0x03, 0x01, 0x01, 0x07})
	require.NoError(t, err)
	require.NoError(t, c2.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, _ = io.ReadAll(c2)
	assert.Empty(t, got)
	require.Eventually(t, func() bool { return l.Stats().Failures[tlsserve.ReasonNotTLS] == 2 }, 10*time.Second, time.Millisecond)
}

func TestMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "server CA")
	clientCA := tlstest.NewCA(t, "client CA")
	otherCA := tlstest.NewCA(t, "other CA")
	dir := t.TempDir()
	files := tlstest.Write(t, dir, ca.Server(t), clientCA)
	certs, err := tlsserve.Load(tlsserve.Files(files))
	require.NoError(t, err)
	require.True(t, certs.MutualTLS())
	var logs syncbuf.Buffer
	l := listen(t, certs, tlsserve.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), LogInterval: time.Hour})
	addr := echoServer(t, l)

	good := clientCA.Client(t, "orders")
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &good))
	require.NoError(t, err)

	_, err = roundTrip(addr, tlstest.ClientConfig(ca, nil))
	require.Error(t, err, "no client certificate")
	require.Eventually(t, failures(l, tlsserve.ReasonNoClientCert), 10*time.Second, time.Millisecond)
	// The failure is counted before it is logged: wait for its warning, or
	// the next failure could take the interval's one warning first (its
	// handshake ending while this one's goroutine sits between the two).
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "reason=no_client_cert") }, 10*time.Second, time.Millisecond,
		"the first failure of the interval is logged")

	stranger := otherCA.Client(t, "stranger")
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &stranger))
	require.Error(t, err, "a certificate from another CA")
	require.Eventually(t, failures(l, tlsserve.ReasonBadClientCert), 10*time.Second, time.Millisecond)

	expired := clientCA.Client(t, "late", tlstest.Options{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &expired))
	require.Error(t, err, "an expired certificate")
	require.Eventually(t, func() bool { return l.Stats().Failures[tlsserve.ReasonBadClientCert] == 2 }, 10*time.Second, time.Millisecond)

	serverCert := ca.Server(t) // signed by a trusted CA but not for client authentication
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &serverCert))
	require.Error(t, err)
	require.Eventually(t, func() bool { return l.Stats().Failures[tlsserve.ReasonBadClientCert] == 3 }, 10*time.Second, time.Millisecond)

	noEKU := clientCA.Client(t, "no-eku", tlstest.Options{NoExtKeyUsage: true}) // Go would take it for any usage
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &noEKU))
	require.Error(t, err, "a client certificate without clientAuth")
	require.Eventually(t, func() bool { return l.Stats().Failures[tlsserve.ReasonBadClientCert] == 4 }, 10*time.Second, time.Millisecond)

	assert.Equal(t, 1, strings.Count(logs.String(), "handshake failed"), "one warning per interval: %s", logs.String())
	assert.Contains(t, logs.String(), "reason=no_client_cert")

	// The client CA is replaced: the stranger's CA is now the one.
	tlstest.WriteFile(t, files.ClientCA, otherCA.PEM)
	changed, err := certs.Reload(false)
	require.NoError(t, err)
	require.True(t, changed)
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &stranger))
	require.NoError(t, err)
	_, err = roundTrip(addr, tlstest.ClientConfig(ca, &good))
	require.Error(t, err, "a CA taken out stops its clients at once")
}

func TestReloadWithoutDroppingConnections(t *testing.T) {
	ca := tlstest.NewCA(t, "server CA")
	first := ca.Server(t)
	files := tlstest.Write(t, t.TempDir(), first, nil)
	certs, err := tlsserve.Load(tlsserve.Files{Cert: files.Cert, Key: files.Key})
	require.NoError(t, err)
	l := listen(t, certs, tlsserve.Options{})
	addr := echoServer(t, l)

	open, err := tls.Dial("tcp", addr, tlstest.ClientConfig(ca, nil))
	require.NoError(t, err)
	defer open.Close()
	r := bufio.NewReader(open)
	echo := func() {
		t.Helper()
		_, err := io.WriteString(open, "x\n")
		require.NoError(t, err)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "x\n", line)
	}
	echo()
	assert.Equal(t, first.Leaf.SerialNumber, open.ConnectionState().PeerCertificates[0].SerialNumber)

	changed, err := certs.Reload(false)
	require.NoError(t, err)
	assert.False(t, changed, "files unchanged")

	// Renewed one file at a time: in between the pair does not match and
	// the old one stays.
	second := ca.Server(t)
	tlstest.WriteFile(t, files.Cert, second.CertPEM)
	_, err = certs.Reload(false)
	var fe *tlsserve.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, tlsserve.RoleKey, fe.Role)
	st, err := roundTrip(addr, tlstest.ClientConfig(ca, nil))
	require.NoError(t, err)
	assert.Equal(t, first.Leaf.SerialNumber, st.PeerCertificates[0].SerialNumber, "the old pair stays in force")

	tlstest.WriteFile(t, files.Key, second.KeyPEM)
	changed, err = certs.Reload(false)
	require.NoError(t, err)
	assert.True(t, changed)
	st, err = roundTrip(addr, tlstest.ClientConfig(ca, nil))
	require.NoError(t, err)
	assert.Equal(t, second.Leaf.SerialNumber, st.PeerCertificates[0].SerialNumber, "new handshakes get the new certificate")
	echo() // the connection opened before goes on
	cs := certs.Stats()
	assert.Equal(t, uint64(1), cs.Reloads)
	assert.Equal(t, uint64(1), cs.ReloadErrors)
	assert.Equal(t, second.Leaf.NotAfter.Unix(), cs.NotAfter.Unix())
}

func TestLoadErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	dir := t.TempDir()
	good := tlstest.Write(t, dir, ca.Server(t), ca)
	other := ca.Server(t)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o600))
		return p
	}
	expired := ca.Server(t, tlstest.Options{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	future := ca.Server(t, tlstest.Options{NotBefore: time.Now().Add(time.Hour)})
	for _, c := range []struct {
		f    tlsserve.Files
		role string
		want string
	}{
		{tlsserve.Files{Cert: filepath.Join(dir, "none.pem"), Key: good.Key}, tlsserve.RoleCert, "no such file"},
		{tlsserve.Files{Cert: good.Cert, Key: filepath.Join(dir, "none.pem")}, tlsserve.RoleKey, "no such file"},
		{tlsserve.Files{Cert: good.Cert, Key: good.Key, ClientCA: filepath.Join(dir, "none.pem")}, tlsserve.RoleClientCA, "no such file"},
		{tlsserve.Files{Cert: good.Key, Key: good.Key}, tlsserve.RoleCert, "no PEM CERTIFICATE"},
		{tlsserve.Files{Cert: good.Cert, Key: good.Cert}, tlsserve.RoleKey, "no PEM PRIVATE KEY"},
		{tlsserve.Files{Cert: good.Cert, Key: write("other.key", other.KeyPEM)}, tlsserve.RoleKey, "does not go with"},
		{tlsserve.Files{Cert: write("exp.pem", expired.CertPEM), Key: write("exp.key", expired.KeyPEM)}, tlsserve.RoleCert, "expired on"},
		{tlsserve.Files{Cert: write("fut.pem", future.CertPEM), Key: write("fut.key", future.KeyPEM)}, tlsserve.RoleCert, "not valid before"},
		{tlsserve.Files{Cert: good.Cert, Key: good.Key, ClientCA: write("junk.pem", []byte("junk"))}, tlsserve.RoleClientCA, "no PEM CERTIFICATE"},
	} {
		_, err := tlsserve.Load(c.f)
		var fe *tlsserve.FileError
		require.ErrorAs(t, err, &fe, "%+v", c.f)
		assert.Equal(t, c.role, fe.Role, "%v", err)
		assert.ErrorContains(t, err, c.want)
		assert.NotContains(t, err.Error(), "PRIVATE KEY-----", "no key material in errors")
	}
	_, err := tlsserve.Load(tlsserve.Files{Cert: good.Cert})
	assert.Error(t, err)
}

func TestHandshakeTimeout(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	files := tlstest.Write(t, t.TempDir(), ca.Server(t), nil)
	certs, err := tlsserve.Load(tlsserve.Files{Cert: files.Cert, Key: files.Key})
	require.NoError(t, err)
	l := listen(t, certs, tlsserve.Options{HandshakeTimeout: 50 * time.Millisecond})
	addr := echoServer(t, l)
	c, err := net.Dial("tcp", addr) // and says nothing
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.ReadAll(c)
	_ = err // closed by the server
	require.Eventually(t, failures(l, tlsserve.ReasonTimeout), 10*time.Second, time.Millisecond)
}
