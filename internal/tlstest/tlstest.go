// Package tlstest makes certificates for tests (and scripts/securebench) with crypto/x509: a CA,
// server certificates for 127.0.0.1 and localhost, client certificates,
// written to files as the servers read them. Keys are ECDSA P-256, quick
// to make.
package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TB is what the functions need of a test: testing.TB has it, and so
// can a benchmark script that stops on the first failure.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// CA is a certificate authority of a test.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// PEM is the CA certificate, as a tlsClientCA file holds it.
	PEM []byte
}

// Pair is a certificate with its key.
type Pair struct {
	CertPEM, KeyPEM []byte
	Leaf            *x509.Certificate
	TLS             tls.Certificate
}

// Options change a certificate from the defaults (valid from an hour ago
// for a day).
type Options struct {
	NotBefore, NotAfter time.Time
	// NoExtKeyUsage leaves the extended key usage out (Go then takes the
	// certificate as valid for any usage).
	NoExtKeyUsage bool
}

func newKey(tb TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("tlstest: key: %v", err)
	}
	return k
}

func serial(tb TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		tb.Fatalf("tlstest: serial: %v", err)
	}
	return n
}

// NewCA makes a self-signed CA named name.
func NewCA(tb TB, name string) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"vesta-go tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		tb.Fatalf("tlstest: CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("tlstest: CA: %v", err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool is a pool of the CA alone, for a client's RootCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Server makes a server certificate for 127.0.0.1, ::1 and localhost.
func (ca *CA) Server(tb TB, o ...Options) Pair {
	tb.Helper()
	return ca.issue(tb, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, o)
}

// Client makes a client certificate for cn.
func (ca *CA) Client(tb TB, cn string, o ...Options) Pair {
	tb.Helper()
	return ca.issue(tb, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, o)
}

func (ca *CA) issue(tb TB, tmpl *x509.Certificate, o []Options) Pair {
	tb.Helper()
	tmpl.SerialNumber = serial(tb)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if len(o) > 0 {
		if !o[0].NotBefore.IsZero() {
			tmpl.NotBefore = o[0].NotBefore
		}
		if !o[0].NotAfter.IsZero() {
			tmpl.NotAfter = o[0].NotAfter
		}
		if o[0].NoExtKeyUsage {
			tmpl.ExtKeyUsage = nil
		}
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	key := newKey(tb)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		tb.Fatalf("tlstest: certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("tlstest: certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("tlstest: key: %v", err)
	}
	p := Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Leaf:    leaf,
	}
	p.TLS = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return p
}

// Files are the paths a server's TLS keys name.
type Files struct {
	Cert, Key, ClientCA string
}

// Write writes p (and the CA, when ca is not nil, as the client CA) into
// dir, as cert.pem, key.pem (mode 0600) and ca.pem, and returns the paths.
func Write(tb TB, dir string, p Pair, ca *CA) Files {
	tb.Helper()
	f := Files{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	WriteFile(tb, f.Cert, p.CertPEM)
	WriteFile(tb, f.Key, p.KeyPEM)
	if ca != nil {
		f.ClientCA = filepath.Join(dir, "ca.pem")
		WriteFile(tb, f.ClientCA, ca.PEM)
	}
	return f
}

// WriteFile replaces the file at path atomically (a temporary file
// renamed over it), as a certificate manager renews one.
func WriteFile(tb TB, path string, data []byte) {
	tb.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatalf("tlstest: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatalf("tlstest: %v", err)
	}
}

// ClientConfig is a client's TLS configuration that trusts ca and, when
// cert is not nil, presents it.
func ClientConfig(ca *CA, cert *Pair) *tls.Config {
	c := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	if cert != nil {
		c.Certificates = []tls.Certificate{cert.TLS}
	}
	return c
}
