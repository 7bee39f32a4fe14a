package etcdlease

import (
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

// Defaults and limits of Options.
const (
	DefaultPrefix       = leasekit.DefaultPrefix
	DefaultTTL          = leasekit.DefaultTTL
	MinTTL              = leasekit.MinTTL
	MaxTTL              = leasekit.MaxTTL
	DefaultDialTimeout  = leasekit.DefaultDialTimeout
	MinDialTimeout      = leasekit.MinDialTimeout
	MaxDialTimeout      = leasekit.MaxDialTimeout
	DefaultMaxClockSkew = leasekit.DefaultMaxClockSkew
	MinMaxClockSkew     = leasekit.MinMaxClockSkew
	MaxMaxClockSkew     = leasekit.MaxMaxClockSkew
)

// Options configures a Lease. Only Endpoints is required; a zero field
// takes its default. New validates them.
type Options struct {
	// Endpoints of the etcd cluster: host:port or http(s)://host:port.
	Endpoints []string
	// Prefix of every key (default /vesta). Nodes that must not share a
	// machine id must share the prefix.
	Prefix string
	// TTL of the etcd lease, whole seconds from 2s (default 1m). It is
	// the outage a node rides out: it renews every TTL/3 and stops issuing
	// TTL − FenceMargin(TTL) after its last renewal, so it keeps issuing
	// through an etcd outage of at least 2/3 of TTL. It is also how long
	// the id of a node that died for good stays taken (a node restarted
	// on its data dir resumes its id at once).
	TTL time.Duration
	// DialTimeout bounds connecting and every etcd request made while
	// claiming an id (default 5s).
	DialTimeout time.Duration
	// CACertFile verifies the etcd servers (TLS); CertFile and KeyFile
	// authenticate this client (both or neither). Verification cannot be
	// skipped.
	CACertFile, CertFile, KeyFile string
	// Username and Password for etcd authentication (both or neither).
	Username, Password string
	// NodeName names this node in the machine keys and clock reports
	// (default hostname-pid). No '/' or spaces.
	NodeName string
	// MaxClockSkew is how far this node's clock may differ from the live
	// nodes' before it refuses to claim an id (default 1s).
	MaxClockSkew time.Duration
	// MachineRange limits the ids this fleet claims (nil: all, 0-1023).
	// A fleet that sets one registers it under RangesKey, and a range
	// overlapping another prefix's in the same etcd is refused at start
	// (*RangeOverlapError); fleets on separate etcd clusters (datacenters)
	// must be given disjoint ranges by hand.
	MachineRange *Range
	// Logger receives the lease's transitions; nil means slog.Default().
	Logger *slog.Logger

	// lowestFirst makes claims try the lowest free id instead of a random
	// one, so that tests can predict the id a node gets (export_test.go).
	lowestFirst bool
}

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the TLS files are read), without making a Lease: a
// configuration loader can refuse bad options before anything starts.
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields, validates every field (an *OptionError
// naming the first wrong one) and loads the TLS files. dialing says the
// Lease makes its own client: without it (a client given to
// NewWithClient) the connection fields are not used and not checked.
func (o Options) withDefaults(dialing bool) (Options, *tls.Config, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	o.Prefix = strings.TrimRight(o.Prefix, "/")
	timings := leasekit.Timings{TTL: &o.TTL, DialTimeout: &o.DialTimeout, MaxClockSkew: &o.MaxClockSkew}
	timings.Fill()
	o.NodeName = leasekit.NodeName(o.NodeName, os.Getpid())
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	checkEndpoints := o.checkEndpoints
	if !dialing {
		checkEndpoints = func() *OptionError { return nil }
	}
	checks := append([]func() *OptionError{
		checkEndpoints,
		func() *OptionError {
			return check(o.Prefix != "" && !strings.ContainsAny(o.Prefix, " \t\n"), "Prefix", o.Prefix, "a key prefix such as /vesta, without spaces")
		},
	}, timings.Checks()...)
	checks = append(checks,
		func() *OptionError {
			return check(o.NodeName != "" && !strings.ContainsAny(o.NodeName, "/ \t\n"), "NodeName", o.NodeName, "a name without '/' or spaces")
		},
		leasekit.CheckRange(o.MachineRange),
		func() *OptionError {
			return check((o.CertFile == "") == (o.KeyFile == ""), "KeyFile", o.KeyFile, "CertFile and KeyFile together")
		},
		func() *OptionError {
			return check((o.Username == "") == (o.Password == ""), "Password", strings.Repeat("*", len(o.Password)), "Username and Password together")
		},
	)
	if err := leasekit.CheckAll("etcdlease", checks...); err != nil {
		return o, nil, err
	}
	if !dialing {
		return o, nil, nil
	}
	cfg, err := o.tlsConfig()
	if err != nil {
		return o, nil, err
	}
	return o, cfg, nil
}

var check = leasekit.Check

// checkEndpoints accepts host:port and http(s)://host:port.
func (o Options) checkEndpoints() *OptionError {
	const want = "one or more etcd endpoints, host:port or http(s)://host:port"
	if len(o.Endpoints) == 0 {
		return &OptionError{Option: "Endpoints", Want: want}
	}
	for _, ep := range o.Endpoints {
		hostPort := ep
		if strings.Contains(ep, "://") {
			u, err := url.Parse(ep)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
				return &OptionError{Option: "Endpoints", Value: ep, Want: want}
			}
			hostPort = u.Host
		}
		if host, port, err := net.SplitHostPort(hostPort); err != nil || host == "" || port == "" {
			return &OptionError{Option: "Endpoints", Value: ep, Want: want}
		}
	}
	return nil
}

// tlsConfig loads the TLS files; nil when none is set.
func (o Options) tlsConfig() (*tls.Config, error) {
	if o.CACertFile == "" && o.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CACertFile != "" {
		pem, err := os.ReadFile(o.CACertFile)
		if err != nil {
			return nil, &OptionError{Provider: "etcdlease", Option: "CACertFile", Value: o.CACertFile, Want: "a readable PEM file", Err: err}
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, &OptionError{Provider: "etcdlease", Option: "CACertFile", Value: o.CACertFile, Want: "PEM certificates", Err: errors.New("no certificate found")}
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
