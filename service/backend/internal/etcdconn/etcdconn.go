// Package etcdconn checks how an etcd client is to connect (the endpoints)
// and loads its TLS files: etcdlease's options, apart from the lease.
package etcdconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/vesta-go/vesta/service/backend/lease"
)

// CheckEndpoints accepts host:port and http(s)://host:port, without user
// info; it checks nothing unless dialing (a client given has its own).
func CheckEndpoints(endpoints []string, dialing bool) *lease.OptionError {
	const want = "one or more etcd endpoints, host:port or http(s)://host:port"
	if !dialing {
		return nil
	}
	if len(endpoints) == 0 {
		return &lease.OptionError{Option: "Endpoints", Want: want}
	}
	for _, ep := range endpoints {
		hostPort := ep
		if strings.Contains(ep, "://") {
			u, err := url.Parse(ep)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
				return &lease.OptionError{Option: "Endpoints", Value: "(not shown: it may hold a password)", Want: want}
			}
			if u.User != nil { // the client ignores it, and it would be logged with the endpoint
				return &lease.OptionError{Option: "Endpoints", Value: u.Redacted(), Want: "an endpoint without user info: give the credentials as Username and Password (etcdUsername, etcdPassword)"}
			}
			hostPort = u.Host
		}
		if host, port, err := net.SplitHostPort(hostPort); err != nil || host == "" || port == "" {
			return &lease.OptionError{Option: "Endpoints", Value: ep, Want: want}
		}
	}
	return nil
}

// TLS loads the TLS files of an etcd client (nil: none set);
// verification is never skipped.
func TLS(caCertFile, certFile, keyFile string) (*tls.Config, error) {
	if caCertFile == "" && certFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caCertFile != "" {
		pem, err := os.ReadFile(caCertFile)
		if cfg.RootCAs = x509.NewCertPool(); err == nil && !cfg.RootCAs.AppendCertsFromPEM(pem) {
			err = errors.New("no certificate found")
		}
		if err != nil {
			return nil, &lease.OptionError{Provider: "etcdlease", Option: "CACertFile", Value: caCertFile, Want: "a readable file of PEM certificates", Err: err}
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, &lease.OptionError{Provider: "etcdlease", Option: "CertFile", Value: certFile, Want: "a PEM certificate matching KeyFile", Err: err}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
