package etcdlease

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
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
	rl := leasekit.RenewLog{Log: l.o.Logger, Provider: "etcdlease"}
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
			rl.Failed(h.Now(), s.validUntil.Load(), s.heldMachine(), err)
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
		rl.Renewed(h.Now(), s.heldMachine())
		wait = interval
		// The mark the service stores for this renewal reports the
		// clock too; the state lets a restart resume this lease.
		if s.held.Load() {
			_ = l.saveState(h, s) // logged
		}
		l.watchHistory(ctx, h, s)
	}
}
