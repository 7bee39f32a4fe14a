package etcdlease

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/clockskew"
	"github.com/vesta-go/vesta/internal/leasekit"
	"github.com/vesta-go/vesta/service"
)

// Lease leases a machine id from etcd for one service (service.MachineLease).
type Lease struct {
	*leasekit.Engine
	o     Options
	tls   *tls.Config
	keys  Keys
	given *clientv3.Client // the caller's client (NewWithClient), never closed here
	cli   *clientv3.Client // set by Run
	now   func() int64     // the service clock, set by Run

	noSpace   atomic.Bool // the last mark store met etcd's NOSPACE alarm
	noSpaceMu sync.Mutex  // orders noteNoSpace's transitions

	historyEvery            time.Duration
	historyWarn             int64
	histChecked, histOldest atomic.Int64 // service clock of the last history check; the oldest revision seen and still readable
	uncompacted             atomic.Int64 // revisions since histOldest
}

// Defaults, errors and error types: the lease engine's, shared with pglease.
const (
	DefaultPrefix       = leasekit.DefaultPrefix
	DefaultTTL          = leasekit.DefaultTTL
	DefaultDialTimeout  = leasekit.DefaultDialTimeout
	DefaultMaxClockSkew = leasekit.DefaultMaxClockSkew
	MaxMarkRefusals     = service.MaxMarkRefusals // ids one attempt gives back for their marks
)

var (
	ErrAllTaken = leasekit.ErrAllTaken     // every id of the range is held (intf.ErrUnavailable)
	ErrNotHeld  = leasekit.ErrNotHeld      // the id's key is gone or another lease's (intf.ErrFenced)
	ErrRunning  = leasekit.ErrRunning      // Run was called on a Lease that runs already
	FullRange   = service.FullMachineRange // every machine id
)

type (
	OptionError     = leasekit.OptionError    // names the wrong Options field (intf.ErrInvalidArgument)
	ClockSkewError  = clockskew.Error         // this clock is off the live nodes' median by more than MaxClockSkew
	MarksAheadError = service.MarksAheadError // an attempt gave back every id it claimed (intf.ErrClockBehind)
	Range           = service.MachineRange    // machine ids First..Last, inclusive
	Common          = leasekit.Common         // the options pglease takes too
)

// New validates o (an *OptionError names the wrong field) and loads the TLS
// files. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) { return newLease(o, nil) }

// NewWithClient is New for a client the caller made, which Run never closes;
// o's connection fields are unused, but DialTimeout bounds each etcd request.
func NewWithClient(cli *clientv3.Client, o Options) (*Lease, error) {
	if cli == nil {
		return nil, &OptionError{Provider: "etcdlease", Option: "client", Want: "a *clientv3.Client"}
	}
	return newLease(o, cli)
}

func newLease(o Options, cli *clientv3.Client) (*Lease, error) {
	o, cfg, err := o.withDefaults(cli == nil)
	if err != nil {
		return nil, err
	}
	if cli != nil {
		o.Endpoints = cli.Endpoints()
	}
	l := &Lease{o: o, tls: cfg, keys: Keys{Prefix: o.Prefix}, given: cli, historyEvery: 5 * time.Minute, historyWarn: 1_000_000}
	l.Engine = leasekit.NewEngine(leasekit.Config{
		Provider: "etcdlease", Coordinator: "etcd", Marks: l.keys.Marks(), Claims: l.keys.Machines(), Layout: "key " + l.keys.Layout(), Endpoints: strings.Join(o.Endpoints, ","),
		Common: o.Common, LowestFirst: o.lowestFirst,
	}, (*backend)(l))
	return l, nil
}

// Options returns the options in force, defaults filled in.
func (l *Lease) Options() Options { return l.o }

// Keys returns the layout of the keys this lease uses.
func (l *Lease) Keys() Keys { return l.keys }

// Options configures a Lease: only Endpoints is required, a zero field takes its default.
type Options struct {
	Endpoints []string // of the etcd cluster: host:port or http(s)://host:port
	// Common: Prefix is every key's; NodeName has no '/' or spaces; MaxClockSkew is
	// against the live nodes'; a MachineRange overlapping another prefix's in the same
	// etcd is refused (*RangeOverlapError).
	Common
	CACertFile, CertFile, KeyFile string // TLS: CACertFile verifies the servers, CertFile and KeyFile (both or neither) this client
	Username, Password            string // for etcd authentication (both or neither)

	lowestFirst bool // claim the lowest free id (tests: export_test.go)
}

// Validate checks every field as New does (an *OptionError names the
// first wrong one; the TLS files are read), without making a Lease.
func (o Options) Validate() error {
	_, _, err := o.withDefaults(true)
	return err
}

// withDefaults fills zero fields and validates them; dialing (no client given)
// checks the connection fields and loads the TLS files.
func (o Options) withDefaults(dialing bool) (Options, *tls.Config, error) {
	o.Prefix = strings.TrimRight(cmp.Or(o.Prefix, DefaultPrefix), "/")
	prefix, check := o.Prefix, leasekit.Check
	err := o.Fill("etcdlease", func() []*OptionError {
		return []*OptionError{o.checkEndpoints(dialing),
			check(prefix != "" && !strings.ContainsAny(prefix, " \t\n"), "Prefix", prefix, "a key prefix such as /vesta, without spaces"),
			check(!strings.ContainsAny(o.NodeName, "/ \t\n"), "NodeName", o.NodeName, "a name without '/' or spaces"),
			check((o.CertFile == "") == (o.KeyFile == ""), "KeyFile", o.KeyFile, "CertFile and KeyFile together"),
			check((o.Username == "") == (o.Password == ""), "Password", strings.Repeat("*", len(o.Password)), "Username and Password together")}
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

// tlsConfig loads the TLS files (nil: none set); verification is never skipped.
func (o Options) tlsConfig() (*tls.Config, error) {
	if o.CACertFile == "" && o.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CACertFile != "" {
		pem, err := os.ReadFile(o.CACertFile)
		if cfg.RootCAs = x509.NewCertPool(); err == nil && !cfg.RootCAs.AppendCertsFromPEM(pem) {
			err = errors.New("no certificate found")
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
