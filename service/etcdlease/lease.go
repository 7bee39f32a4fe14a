package etcdlease

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Lease leases a machine id from etcd. It implements service.MachineLease
// (Run, StoreMark, Stats) with the one lease engine the PostgreSQL lease
// shares; this package is its etcd backend. One Lease serves one service.
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

var _ service.MachineLease = (*Lease)(nil)

// Shared with pglease (service/internal/leasekit).
const (
	DefaultPrefix       = leasekit.DefaultPrefix
	DefaultTTL          = leasekit.DefaultTTL
	DefaultDialTimeout  = leasekit.DefaultDialTimeout
	DefaultMaxClockSkew = leasekit.DefaultMaxClockSkew
	// MaxMarkRefusals bounds the claimed ids one attempt gives back because
	// their marks are too far ahead (then a *MarksAheadError).
	MaxMarkRefusals = leasekit.MaxMarkRefusals
	retryInterval   = leasekit.RetryInterval
)

// FenceMargin is how long before etcd could expire a lease its holder
// stops issuing (leasekit.FenceMargin).
func FenceMargin(ttl time.Duration) time.Duration { return leasekit.FenceMargin(ttl) }

// RenewInterval is how often a holder renews its lease: TTL/3.
func RenewInterval(ttl time.Duration) time.Duration { return leasekit.RenewInterval(ttl) }

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
// concurrency.NewSession takes one: Run uses cli and never closes it. o's
// connection fields (Endpoints, the TLS files, Username, Password) are not
// used; DialTimeout still bounds each etcd request.
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
	l := &Lease{o: o, tls: cfg, keys: Keys{Prefix: o.Prefix}, given: cli, historyEvery: 5 * time.Minute, historyWarn: 1_000_000}
	r := FullRange
	if o.MachineRange != nil {
		r = *o.MachineRange
	}
	l.Engine = leasekit.NewEngine(leasekit.Config{
		Provider: "etcdlease", Coordinator: "etcd", Marks: l.keys.Marks(), Claims: l.keys.Machines(), Endpoints: strings.Join(o.Endpoints, ","),
		Prefix: o.Prefix, NodeName: o.NodeName, TTL: o.TTL, DialTimeout: o.DialTimeout, Range: r, Logger: o.Logger, LowestFirst: o.lowestFirst,
	}, (*backend)(l))
	return l
}

// Options returns the options in force, defaults filled in.
func (l *Lease) Options() Options { return l.o }

// Keys returns the layout of the keys this lease uses.
func (l *Lease) Keys() Keys { return l.keys }

// dial creates the etcd client. gRPC reconnects at most retryInterval
// apart, so renewals resume soon after an outage ends.
func (l *Lease) dial() (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: l.o.Endpoints, DialTimeout: l.o.DialTimeout, TLS: l.tls, Username: l.o.Username, Password: l.o.Password,
		Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: retryInterval},
			MinConnectTimeout: l.o.DialTimeout,
		})},
	})
	if err != nil {
		return nil, l.unavailable(context.Background(), "connecting", err)
	}
	return cli, nil
}

func (l *Lease) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return leasekit.Timeout(ctx, l.o.DialTimeout)
}

// unavailable wraps the failure of a request made with ctx: unreachable,
// naming the endpoints and what was being done.
func (l *Lease) unavailable(ctx context.Context, doing string, err error) error {
	return leasekit.UnreachableError{Err: fmt.Errorf("%w: etcd %s: %s%s: %w", intf.ErrUnavailable,
		strings.Join(l.o.Endpoints, ","), doing, leasekit.TimedOut(ctx, err, l.o.DialTimeout), err)}
}
