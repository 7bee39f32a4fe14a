package etcdlease

import (
	"context"
	"errors"
	"fmt"
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
	prevMark int64  // the earlier holders' mark: the floor of every mark stored
	cluster  uint64 // etcd cluster id, from the claim's response
	now      func() int64
	// validUntil is when the lease is surely still held, in service
	// clock nanoseconds; the renewer raises it.
	validUntil atomic.Int64
	// storedMark is a mark known to be stored in etcd for machine: a
	// mark store that fails for at most it is no loss (see StoreMark).
	storedMark atomic.Int64
	// rename: the machine key still names the node of an earlier run
	// (resumed); the next mark store rewrites it.
	rename atomic.Bool
	// offline: resumed without reaching etcd; no renewal has succeeded
	// since (renew retries quickly, StoreMark does not wait for etcd
	// for a mark already covered).
	offline atomic.Bool
	// held: the service holds machine (Hold returned); its state is saved.
	held atomic.Bool

	lost     chan struct{} // closed once the lease or the id is known lost
	loseOnce sync.Once
	reason   string // why it was lost; read after lost is closed

	stateMu  sync.Mutex // orders saveState calls
	released bool       // the lease was revoked (under stateMu)

	stopRenew context.CancelFunc
	renewDone chan struct{}
}

func newSession(lease clientv3.LeaseID, h service.LeaseHolder) *session {
	return &session{lease: lease, now: h.Now, lost: make(chan struct{}), renewDone: make(chan struct{})}
}

// heldMachine is the id the service holds, or -1 before it holds one: the
// renewer runs while the id is claimed (and claimed again after a refused
// mark), so it reads the id only once held has published it.
func (s *session) heldMachine() int64 {
	if s.held.Load() {
		return s.machine
	}
	return -1
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

// startRenewing keeps s's lease alive in the background until release.
func (l *Lease) startRenewing(ctx context.Context, h service.LeaseHolder, s *session) {
	rctx, stop := context.WithCancel(ctx)
	s.stopRenew = stop
	go l.renew(rctx, h, s)
}

// acquire grants a lease (and starts renewing it at once), checks the
// clock, and claims an id as c says, reporting the clock in the same
// transaction. On error the lease is revoked.
func (l *Lease) acquire(ctx context.Context, h service.LeaseHolder, c choice) (_ *session, err error) {
	_, cli := l.current()
	t0 := h.Now()
	gctx, cancel := l.timeout(ctx)
	grant, err := cli.Grant(gctx, int64(l.o.TTL/time.Second))
	cancel()
	if err != nil {
		return nil, l.unavailable(gctx, "granting a lease", err)
	}
	s := newSession(grant.ID, h)
	s.validUntil.Store(t0 + int64(l.validity(grant.TTL)))
	l.startRenewing(ctx, h, s)
	defer func() {
		if err != nil {
			l.release(h, s)
		}
	}()
	if err := l.checkClocks(ctx, h, s); err != nil {
		return nil, err
	}
	if s.machine, s.prevMark, err = l.claim(ctx, s, c); err != nil {
		return nil, err
	}
	s.storedMark.Store(s.prevMark)
	if err := l.checkRanges(ctx, s); err != nil {
		return nil, err
	}
	if s.isLost() {
		return nil, fmt.Errorf("%w: the lease was lost while claiming machine %d: %s", ErrNotHeld, s.machine, s.why())
	}
	return s, nil
}

// release stops renewing and revokes the lease, which deletes its keys.
// A held lease is first saved as released, so that no restart can ever
// resume a lease that was revoked (its id may be someone else's by then);
// when that cannot be saved, the lease is left to expire instead.
func (l *Lease) release(h service.LeaseHolder, s *session) {
	s.stopRenew()
	<-s.renewDone
	if s.held.Load() {
		s.stateMu.Lock()
		s.released = true
		s.stateMu.Unlock()
		if err := l.saveState(h, s); err != nil {
			l.o.Logger.Warn("etcdlease: not revoking the lease, as its release cannot be recorded in the data dir; etcd frees its machine id when it expires",
				"machine", s.machine, "ttl", l.o.TTL, "err", err)
			return
		}
	}
	_, cli := l.current()
	ctx, cancel := context.WithTimeout(context.Background(), l.o.DialTimeout)
	defer cancel()
	if _, err := cli.Revoke(ctx, s.lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		l.o.Logger.Warn("etcdlease: cannot revoke the lease; etcd frees its machine id when it expires",
			"lease", fmt.Sprintf("%x", int64(s.lease)), "ttl", l.o.TTL, "err", err)
	}
}
