package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// dial creates the etcd client. gRPC reconnects at most retryInterval
// apart, so renewals resume soon after an outage ends.
func (l *Lease) dial() (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   l.o.Endpoints,
		DialTimeout: l.o.DialTimeout,
		TLS:         l.tls,
		Username:    l.o.Username,
		Password:    l.o.Password,
		Logger:      zap.NewNop(),
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

// errTimedOut is the cause of a request context whose own timeout expired.
var errTimedOut = errors.New("etcd request timed out")

// timeout bounds one etcd request by the dial timeout.
func (l *Lease) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, l.o.DialTimeout, errTimedOut)
}

// unavailable wraps the failure of a request made with ctx in
// intf.ErrUnavailable, naming the endpoints and what was being done.
func (l *Lease) unavailable(ctx context.Context, doing string, err error) error {
	hint := ""
	if errors.Is(context.Cause(ctx), errTimedOut) {
		hint = fmt.Sprintf(" (no answer within the dial timeout %s)", l.o.DialTimeout)
	}
	return leasekit.UnreachableError{Err: fmt.Errorf("%w: etcd %s: %s%s: %w", intf.ErrUnavailable, strings.Join(l.o.Endpoints, ","), doing, hint, err)}
}
