package tlsserve

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/reload"
)

// Files are the PEM files of a server's TLS: its certificate (with any
// intermediates after it), its private key, and optionally the CA that
// client certificates must chain to (mutual TLS).
type Files struct {
	Cert, Key string
	// ClientCA, when set, requires every client to present a certificate
	// signed by one of its certificates.
	ClientCA string
}

// The roles of the files, as FileError names them.
const (
	RoleCert     = "cert"
	RoleKey      = "key"
	RoleClientCA = "clientCA"
)

// FileError is a file that cannot be used; Role says which one (RoleCert,
// RoleKey or RoleClientCA), so that a caller can name its setting.
type FileError struct {
	Role, Path string
	Err        error
}

func (e *FileError) Error() string {
	what := map[string]string{RoleCert: "certificate", RoleKey: "private key", RoleClientCA: "client CA"}[e.Role]
	return fmt.Sprintf("tls %s file %s: %v", what, e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Certs holds a server's certificate and client CA, and puts new ones in
// force when their files change (Reload). Safe for concurrent use.
type Certs struct {
	files Files
	now   func() time.Time

	mu  sync.Mutex // one reload at a time
	d   reload.Digest
	cur atomic.Pointer[material]

	reloads, reloadErrors atomic.Uint64
}

// material is one loaded generation of the files.
type material struct {
	cert *tls.Certificate
	pool *x509.CertPool // nil without a client CA
}

// Load reads and checks the files. The certificate must match the key and
// be valid now; the client CA must hold at least one certificate.
func Load(f Files) (*Certs, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("tls: both a certificate and a key file are needed")
	}
	c := &Certs{files: f, now: time.Now}
	if _, err := c.Reload(true); err != nil {
		return nil, err
	}
	c.reloads.Store(0)
	return c, nil
}

// Name names the certificates in logs.
func (c *Certs) Name() string { return "tls certificate " + c.files.Cert }

// MutualTLS says whether clients must present a certificate.
func (c *Certs) MutualTLS() bool { return c.files.ClientCA != "" }

// Reload re-reads the files and, when their content changed (or force),
// checks them and puts them in force for the handshakes from now on. A
// failure leaves the old ones in force. Files renewed one at a time (the
// certificate, then the key) fail to match in between: the next Reload
// after both are written puts them in force.
func (c *Certs) Reload(force bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	paths := []string{c.files.Cert, c.files.Key}
	if c.files.ClientCA != "" {
		paths = append(paths, c.files.ClientCA)
	}
	data, changed, err := c.d.Read(paths...)
	if err != nil {
		c.reloadErrors.Add(1)
		var pe *os.PathError
		if errors.As(err, &pe) {
			return false, &FileError{Role: roleOf(c.files, pe.Path), Path: pe.Path, Err: pe.Err}
		}
		return false, err
	}
	if !changed && !force {
		return false, nil
	}
	m, err := c.parse(data)
	if err != nil {
		c.reloadErrors.Add(1)
		return false, err
	}
	c.cur.Store(m)
	c.reloads.Add(1)
	return true, nil
}

func roleOf(f Files, path string) string {
	switch path {
	case f.Key:
		return RoleKey
	case f.ClientCA:
		return RoleClientCA
	}
	return RoleCert
}

func (c *Certs) parse(data [][]byte) (*material, error) {
	certPEM, keyPEM := data[0], data[1]
	if !hasBlock(certPEM, "CERTIFICATE") {
		return nil, &FileError{Role: RoleCert, Path: c.files.Cert, Err: errors.New("no PEM CERTIFICATE block")}
	}
	if !hasKeyBlock(keyPEM) {
		return nil, &FileError{Role: RoleKey, Path: c.files.Key, Err: errors.New("no PEM PRIVATE KEY block")}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// X509KeyPair's errors quote no key material.
		return nil, &FileError{Role: RoleKey, Path: c.files.Key, Err: fmt.Errorf("does not go with %s: %w", c.files.Cert, err)}
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, &FileError{Role: RoleCert, Path: c.files.Cert, Err: err}
		}
		pair.Leaf = leaf
	}
	now := c.now()
	switch {
	case now.Before(leaf.NotBefore):
		return nil, &FileError{Role: RoleCert, Path: c.files.Cert, Err: fmt.Errorf("not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))}
	case now.After(leaf.NotAfter):
		return nil, &FileError{Role: RoleCert, Path: c.files.Cert, Err: fmt.Errorf("expired on %s", leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	m := &material{cert: &pair}
	if c.files.ClientCA != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data[2]) {
			return nil, &FileError{Role: RoleClientCA, Path: c.files.ClientCA, Err: errors.New("no PEM CERTIFICATE that parses")}
		}
		m.pool = pool
	}
	return m, nil
}

func hasBlock(data []byte, typ string) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == typ {
			return true
		}
	}
}

func hasKeyBlock(data []byte) bool {
	return hasBlock(data, "PRIVATE KEY") || hasBlock(data, "EC PRIVATE KEY") || hasBlock(data, "RSA PRIVATE KEY")
}

// CertStats describe the certificate in force and the reloads.
type CertStats struct {
	// Subject and NotAfter are the certificate's in force.
	Subject  string
	NotAfter time.Time
	// Reloads counts the reloads that put new files in force (not the
	// first load); ReloadErrors those that failed.
	Reloads, ReloadErrors uint64
}

// Stats returns the certificate in force and the reload counters.
func (c *Certs) Stats() CertStats {
	m := c.cur.Load()
	return CertStats{Subject: m.cert.Leaf.Subject.String(), NotAfter: m.cert.Leaf.NotAfter,
		Reloads: c.reloads.Load(), ReloadErrors: c.reloadErrors.Load()}
}

// ServerConfig is the tls.Config of a server: TLS 1.2 or later, AEAD
// suites with forward secrecy for TLS 1.2 (TLS 1.3 has no others), the
// certificate in force at each handshake and, with a client CA, a client
// certificate required and checked against the CA in force.
func (c *Certs) ServerConfig() *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load().cert, nil },
	}
	if c.MutualTLS() {
		// Requested, then checked by verifyClient rather than by
		// crypto/tls, so that the CA in force at each handshake counts
		// (a reload replaces it) and each refusal has a typed reason.
		cfg.ClientAuth = tls.RequestClientCert
		cfg.VerifyConnection = c.verifyClient
	}
	return cfg
}
