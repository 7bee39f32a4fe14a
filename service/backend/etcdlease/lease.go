package etcdlease

import (
	"cmp"
	"context"
	"crypto/tls"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service/backend/internal/etcdconn"
	"github.com/vesta-go/vesta/service/backend/internal/leasekit"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// Lease leases a machine id from etcd for one service (machineid.Lease).
type Lease struct {
	engine *leasekit.Engine // the one lease engine; Lease is its backend
	o      Options
	tls    *tls.Config
	keys   Keys
	given  *clientv3.Client // the caller's client (NewWithClient), never closed here
	cli    *clientv3.Client // set by Run
	now    func() int64     // the service clock, set by Run

	health etcdconn.Health // etcd's history and NOSPACE alarm, as the lease meets them
}

// Defaults, errors and error types of both leases (package lease), shared with pglease.
const (
	DefaultPrefix       = lease.DefaultPrefix
	DefaultTTL          = lease.DefaultTTL
	DefaultDialTimeout  = lease.DefaultDialTimeout
	DefaultMaxClockSkew = lease.DefaultMaxClockSkew
	MaxMarkRefusals     = machineid.MaxMarkRefusals // ids one attempt gives back for their marks
)

var (
	ErrAllTaken = lease.ErrAllTaken   // every id of the range is held (intf.ErrUnavailable)
	ErrNotHeld  = lease.ErrNotHeld    // the id's key is gone or another lease's (intf.ErrFenced)
	ErrRunning  = lease.ErrRunning    // Run was called on a Lease that runs already
	FullRange   = machineid.FullRange // every machine id
)

type (
	OptionError     = lease.OptionError         // names the wrong Options field (intf.ErrInvalidArgument)
	ClockSkewError  = lease.ClockSkewError      // this clock is off the live nodes' median by more than MaxClockSkew
	MarksAheadError = machineid.MarksAheadError // an attempt gave back every id it claimed (intf.ErrClockBehind)
	Range           = machineid.Range           // machine ids First..Last, inclusive
	Common          = lease.Common              // the options pglease takes too
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
	l := &Lease{o: o, tls: cfg, keys: Keys{Prefix: o.Prefix}, given: cli,
		health: etcdconn.Health{Every: 5 * time.Minute, Warn: 1_000_000, Logger: o.Logger}}
	l.engine = leasekit.NewEngine(leasekit.Config{
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
	err := leasekit.Fill(&o.Common, "etcdlease", func() []*OptionError {
		return []*OptionError{etcdconn.CheckEndpoints(o.Endpoints, dialing),
			check(prefix != "" && !strings.ContainsAny(prefix, " \t\n"), "Prefix", prefix, "a key prefix such as /vesta, without spaces"),
			check(!strings.ContainsAny(o.NodeName, "/ \t\n"), "NodeName", o.NodeName, "a name without '/' or spaces"),
			check((o.CertFile == "") == (o.KeyFile == ""), "KeyFile", o.KeyFile, "CertFile and KeyFile together"),
			check((o.Username == "") == (o.Password == ""), "Password", strings.Repeat("*", len(o.Password)), "Username and Password together")}
	})
	if err != nil || !dialing {
		return o, nil, err
	}
	cfg, terr := etcdconn.TLS(o.CACertFile, o.CertFile, o.KeyFile)
	return o, cfg, terr
}

// Run, StoreMark, MarkSpan and Stats are the engine's: a machineid.Lease
// that keeps its mark ahead (machineid.MarkSpan) and counts (Stats.Lease).
func (l *Lease) Run(ctx context.Context, h machineid.Holder) error { return l.engine.Run(ctx, h) }
func (l *Lease) StoreMark(ctx context.Context, m, ms int64) error {
	return l.engine.StoreMark(ctx, m, ms)
}
func (l *Lease) MarkSpan() (keep, step time.Duration) { return l.engine.MarkSpan() }
func (l *Lease) Stats() machineid.LeaseStats          { return l.engine.Stats() }
