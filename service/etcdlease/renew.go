package etcdlease

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/service"
)

// renew keeps s's lease alive until ctx is done or the lease is gone. It
// renews with KeepAliveOnce every RenewInterval (every retryInterval while
// failing) — a keep-alive writes nothing to etcd's history; each success extends the fence to t0 + validity, t0 being the
// service clock read before the request. It never calls h.Lost: a renewal
// that fails leaves the fence to take effect by itself, and a lease known
// to be gone closes s.lost for the Run loop.
func (l *Lease) renew(ctx context.Context, h service.LeaseHolder, s *session) {
	defer close(s.renewDone)
	interval := RenewInterval(l.o.TTL)
	wait := interval
	if s.offline.Load() {
		wait = retryInterval
	}
	var failedAt int64 // service clock at the first failure; 0 while renewing
	fenced := false
	for {
		if ctxtime.Sleep(ctx, wait) != nil {
			return
		}
		t0 := h.Now()
		rctx, cancel := context.WithTimeout(ctx, interval)
		resp, err := l.cli.KeepAliveOnce(rctx, s.lease)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			s.lose("etcd says the lease is gone (expired or revoked)")
			return
		case err != nil:
			now := h.Now()
			if failedAt == 0 {
				failedAt = now
				l.o.Logger.Warn("etcdlease: cannot renew the machine id lease; retrying", "machine", s.heldMachine(),
					"fencedIn", time.Duration(s.validUntil.Load()-now).Round(time.Millisecond), "err", err)
			}
			if !fenced && now >= s.validUntil.Load() {
				fenced = true
				l.o.Logger.Error("etcdlease: machine id fenced: the lease was not renewed in time; no IDs until it is",
					"machine", s.heldMachine(), "failingFor", time.Duration(now-failedAt).Round(time.Millisecond))
			}
			wait = retryInterval
			continue
		}
		v := t0 + int64(l.validity(resp.TTL))
		s.validUntil.Store(max(v, s.validUntil.Load()))
		s.offline.Store(false)
		if s.isLost() {
			return
		}
		h.Renewed(v)
		if failedAt != 0 {
			l.o.Logger.Info("etcdlease: machine id lease renewed again", "machine", s.heldMachine(),
				"failedFor", time.Duration(h.Now()-failedAt).Round(time.Millisecond), "wasFenced", fenced)
			failedAt, fenced = 0, false
		}
		wait = interval
		// The mark the service stores for this renewal reports the
		// clock too; the state lets a restart resume this lease.
		if s.held.Load() {
			_ = l.saveState(h, s) // logged
		}
		l.watchHistory(ctx, h, s)
	}
}
