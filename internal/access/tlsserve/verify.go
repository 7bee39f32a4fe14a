package tlsserve

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
)

// ErrNoClientCert is the handshake error of a client that presented no
// certificate to a server with a client CA.
var ErrNoClientCert = errors.New("tls: client presented no certificate (mutual TLS: tlsClientCA is set)")

// ClientCertError is the handshake error of a client certificate that
// does not chain to the client CA in force (another CA, expired, not for
// client authentication).
type ClientCertError struct {
	Subject string
	Err     error
}

func (e *ClientCertError) Error() string {
	return fmt.Sprintf("tls: client certificate %q refused: %v", e.Subject, e.Err)
}

func (e *ClientCertError) Unwrap() error { return e.Err }

// verifyClient checks the client's certificate chain against the client
// CA in force; it runs for resumed sessions too, so that a CA removed by
// a reload stops its clients at once.
func (c *Certs) verifyClient(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return ErrNoClientCert
	}
	leaf := cs.PeerCertificates[0]
	opts := x509.VerifyOptions{
		Roots:       c.cur.Load().pool,
		CurrentTime: c.now(),
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(cs.PeerCertificates) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(ic)
		}
	}
	if _, err := leaf.Verify(opts); err != nil {
		return &ClientCertError{Subject: leaf.Subject.String(), Err: err}
	}
	// Verify takes a certificate without extended key usage as good for
	// any: a client certificate must say clientAuth itself.
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return &ClientCertError{Subject: leaf.Subject.String(), Err: errors.New("its extended key usage does not name clientAuth")}
	}
	return nil
}
