package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service"
)

// session is one etcd lease and the machine id claimed under it.
type session struct {
	lease    clientv3.LeaseID
	machine  int64
	prevMark int64
	// validUntil is when the lease is surely still held, in service
	// clock nanoseconds; the renewer raises it.
	validUntil atomic.Int64

	lost     chan struct{} // closed once the lease or the id is known lost
	loseOnce sync.Once
	reason   string // why it was lost; read after lost is closed

	stopRenew context.CancelFunc
	renewDone chan struct{}
}

// lose records that the session's id is no longer held.
func (s *session) lose(why string) {
	s.loseOnce.Do(func() {
		s.reason = why
		close(s.lost)
	})
}

func (s *session) why() string { return s.reason }

func (s *session) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// acquire grants a lease (and starts renewing it at once), checks the
// clock, reports it, and claims an id as c says. On error the lease is
// revoked.
func (l *Lease) acquire(ctx context.Context, h service.LeaseHolder, c choice) (_ *session, err error) {
	_, cli := l.current()
	t0 := h.Now()
	gctx, cancel := l.timeout(ctx)
	grant, err := cli.Grant(gctx, int64(l.o.TTL/time.Second))
	cancel()
	if err != nil {
		return nil, l.unavailable(gctx, "granting a lease", err)
	}
	s := &session{lease: grant.ID, lost: make(chan struct{}), renewDone: make(chan struct{})}
	s.validUntil.Store(t0 + int64(l.validity(grant.TTL)))
	rctx, stop := context.WithCancel(ctx)
	s.stopRenew = stop
	go l.renew(rctx, h, s)
	defer func() {
		if err != nil {
			l.release(s)
		}
	}()
	if err := l.checkClocks(ctx, h, s); err != nil {
		return nil, err
	}
	if err := l.report(ctx, h, s); err != nil {
		return nil, err
	}
	if s.machine, s.prevMark, err = l.claim(ctx, s, c); err != nil {
		return nil, err
	}
	if s.isLost() {
		return nil, fmt.Errorf("%w: the lease was lost while claiming machine %d: %s", ErrNotHeld, s.machine, s.why())
	}
	return s, nil
}

// release stops renewing and revokes the lease, which deletes its keys.
func (l *Lease) release(s *session) {
	s.stopRenew()
	<-s.renewDone
	_, cli := l.current()
	ctx, cancel := context.WithTimeout(context.Background(), l.o.DialTimeout)
	defer cancel()
	if _, err := cli.Revoke(ctx, s.lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		l.o.Logger.Warn("etcdlease: cannot revoke the lease; etcd frees its machine id when it expires",
			"lease", fmt.Sprintf("%x", int64(s.lease)), "ttl", l.o.TTL, "err", err)
	}
}

// report stores this node's clock under its lease.
func (l *Lease) report(ctx context.Context, h service.LeaseHolder, s *session) error {
	ctx, cancel := l.timeout(ctx)
	defer cancel()
	ms := h.Now() / int64(time.Millisecond)
	if _, err := l.cli.Put(ctx, l.keys.Clock(l.o.NodeName), strconv.FormatInt(ms, 10), clientv3.WithLease(s.lease)); err != nil {
		return l.unavailable(ctx, "reporting the clock", err)
	}
	return nil
}
