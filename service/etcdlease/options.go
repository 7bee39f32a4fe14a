package etcdlease

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Options configures a Lease. Only Endpoints is required; a zero field
// takes its default. New validates them.
type Options struct {
	// Endpoints of the etcd cluster: host:port or http(s)://host:port.
	Endpoints []string
	// Prefix of every key (default /vesta). Nodes that must not share a
	// machine id must share the prefix.
	Prefix string
	// TTL of the etcd lease, whole seconds from 2s (default 1m): a node
	// renews every TTL/3 and stops issuing TTL − FenceMargin(TTL) after its
	// last renewal, so it rides out an etcd outage of at least 2/3 of TTL.
	// It is also how long the id of a node that died for good stays taken.
	TTL time.Duration
	// DialTimeout bounds connecting and every etcd request (default 5s).
	DialTimeout time.Duration
	// CACertFile verifies the etcd servers (TLS); CertFile and KeyFile
	// authenticate this client (both or neither).
	CACertFile, CertFile, KeyFile string
	// Username and Password for etcd authentication (both or neither).
	Username, Password string
	// NodeName names this node in the machine keys and clock reports
	// (default hostname-pid). No '/' or spaces.
	NodeName string
	// MaxClockSkew is how far this node's clock may differ from the live
	// nodes' before it refuses to claim an id (default 1s).
	MaxClockSkew time.Duration
	// MachineRange limits the ids this fleet claims (nil: all, 0-1023). A
	// fleet that sets one registers it under RangesKey, and a range
	// overlapping another prefix's in the same etcd is refused at start
	// (*RangeOverlapError); fleets on separate etcd clusters must be given
	// disjoint ranges by hand.
	MachineRange *Range
	// Logger receives the lease's transitions; nil means slog.Default().
	Logger *slog.Logger

	lowestFirst bool // claim the lowest free id (tests: export_test.go)
}

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the TLS files are read), without making a Lease.
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields, validates them and loads the TLS files;
// without dialing (a client given) the connection fields are not checked.
func (o Options) withDefaults(dialing bool) (Options, *tls.Config, error) {
	o.Prefix = strings.TrimRight(cmp.Or(o.Prefix, DefaultPrefix), "/")
	prefix, check := o.Prefix, leasekit.Check
	err := leasekit.Common("etcdlease", &o.Prefix, &o.TTL, &o.DialTimeout, &o.MaxClockSkew, &o.NodeName, o.MachineRange, &o.Logger,
		func() *OptionError { return o.checkEndpoints(dialing) },
		func() *OptionError {
			return check(prefix != "" && !strings.ContainsAny(prefix, " \t\n"), "Prefix", prefix, "a key prefix such as /vesta, without spaces")
		},
		func() *OptionError {
			return check(!strings.ContainsAny(o.NodeName, "/ \t\n"), "NodeName", o.NodeName, "a name without '/' or spaces")
		},
		func() *OptionError {
			return check((o.CertFile == "") == (o.KeyFile == ""), "KeyFile", o.KeyFile, "CertFile and KeyFile together")
		},
		func() *OptionError {
			return check((o.Username == "") == (o.Password == ""), "Password", strings.Repeat("*", len(o.Password)), "Username and Password together")
		})
	if err != nil || !dialing {
		return o, nil, err
	}
	cfg, terr := o.tlsConfig()
	return o, cfg, terr
}

// checkEndpoints accepts host:port and http(s)://host:port.
func (o Options) checkEndpoints(dialing bool) *OptionError {
	const want = "one or more etcd endpoints, host:port or http(s)://host:port"
	if !dialing {
		return nil
	}
	if len(o.Endpoints) == 0 {
		return &OptionError{Option: "Endpoints", Want: want}
	}
	for _, ep := range o.Endpoints {
		hostPort := ep
		if strings.Contains(ep, "://") {
			u, err := url.Parse(ep)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
				return &OptionError{Option: "Endpoints", Value: "(not shown: it may hold a password)", Want: want}
			}
			if u.User != nil { // the client ignores it, and it would be logged with the endpoint
				return &OptionError{Option: "Endpoints", Value: u.Redacted(), Want: "an endpoint without user info: give the credentials as Username and Password (etcdUsername, etcdPassword)"}
			}
			hostPort = u.Host
		}
		if host, port, err := net.SplitHostPort(hostPort); err != nil || host == "" || port == "" {
			return &OptionError{Option: "Endpoints", Value: ep, Want: want}
		}
	}
	return nil
}

// tlsConfig loads the TLS files; nil when none is set. Verification cannot
// be skipped.
func (o Options) tlsConfig() (*tls.Config, error) {
	if o.CACertFile == "" && o.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CACertFile != "" {
		pem, err := os.ReadFile(o.CACertFile)
		if err == nil {
			if cfg.RootCAs = x509.NewCertPool(); !cfg.RootCAs.AppendCertsFromPEM(pem) {
				err = errors.New("no certificate found")
			}
		}
		if err != nil {
			return nil, &OptionError{Provider: "etcdlease", Option: "CACertFile", Value: o.CACertFile, Want: "a readable file of PEM certificates", Err: err}
		}
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, &OptionError{Provider: "etcdlease", Option: "CertFile", Value: o.CertFile, Want: "a PEM certificate matching KeyFile", Err: err}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
