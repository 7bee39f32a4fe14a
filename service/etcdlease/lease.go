package etcdlease

import (
	"crypto/tls"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Lease leases a machine id from etcd. It implements service.MachineLease
// (Run, StoreMark) with the one lease engine the PostgreSQL lease shares;
// this package is its etcd backend. One Lease serves one service.
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

	historyEvery time.Duration
	historyWarn  int64
	histChecked  atomic.Int64 // service clock of the last history check
	histOldest   atomic.Int64 // the oldest revision seen and still readable
	uncompacted  atomic.Int64 // revisions since histOldest
}

var _ service.MachineLease = (*Lease)(nil)

// MaxMarkRefusals bounds how many claimed ids one attempt gives back
// because the service refused their mark (too far ahead of its clock):
// the attempt then fails with a *MarksAheadError.
const MaxMarkRefusals = leasekit.MaxMarkRefusals

// FenceMargin is how long before etcd could expire a lease its holder
// stops issuing (leasekit.FenceMargin).
func FenceMargin(ttl time.Duration) time.Duration { return leasekit.FenceMargin(ttl) }

// RenewInterval is how often a holder renews its lease: TTL/3.
func RenewInterval(ttl time.Duration) time.Duration { return leasekit.RenewInterval(ttl) }

// retryInterval is the pause between attempts while etcd fails; gRPC
// reconnects at most this far apart.
const retryInterval = leasekit.RetryInterval

// New validates o (an *OptionError names the wrong field) and loads the TLS
// files. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) {
	o, cfg, err := o.withDefaults(true)
	if err != nil {
		return nil, err
	}
	return newLease(o, cfg, nil), nil
}

// NewWithClient is New for an etcd client the caller made, as etcd's own
// concurrency.NewSession takes one: Run uses cli and never closes it (the
// caller owns it and closes it after Run returns). o's connection fields
// (Endpoints, the TLS files, Username, Password) are not used; DialTimeout
// still bounds each etcd request.
func NewWithClient(cli *clientv3.Client, o Options) (*Lease, error) {
	if cli == nil {
		return nil, &OptionError{Provider: "etcdlease", Option: "client", Want: "a *clientv3.Client"}
	}
	o, _, err := o.withDefaults(false)
	if err != nil {
		return nil, err
	}
	o.Endpoints = cli.Endpoints()
	return newLease(o, nil, cli), nil
}

func newLease(o Options, cfg *tls.Config, cli *clientv3.Client) *Lease {
	l := &Lease{o: o, tls: cfg, keys: Keys{Prefix: o.Prefix}, given: cli, historyEvery: historyEvery, historyWarn: historyWarn}
	r := leasekit.FullRange
	if o.MachineRange != nil {
		r = *o.MachineRange
	}
	l.Engine = leasekit.NewEngine(leasekit.Config{
		Provider: "etcdlease", Coordinator: "etcd", Marks: l.keys.Marks(), Claims: l.keys.Machines(), Endpoints: strings.Join(o.Endpoints, ","),
		Prefix: o.Prefix, NodeName: o.NodeName, TTL: o.TTL, DialTimeout: o.DialTimeout, Range: r,
		Logger: o.Logger, LowestFirst: o.lowestFirst,
	}, (*backend)(l))
	return l
}

// Options returns the options in force, defaults filled in.
func (l *Lease) Options() Options { return l.o }

// Keys returns the layout of the keys this lease uses.
func (l *Lease) Keys() Keys { return l.keys }
