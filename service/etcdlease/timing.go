package etcdlease

import (
	"time"

	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// retryInterval is the pause between attempts while etcd fails: renewals
// and re-acquisition retry this fast, and gRPC reconnects at most this far
// apart, so an outage shorter than the fencing slack goes unnoticed.
const retryInterval = leasekit.RetryInterval

// FenceMargin is how long before etcd could expire a lease its holder
// stops issuing: 1% of ttl plus 100 ms (see leasekit.FenceMargin: etcd
// expires a lease no earlier than TTL after it received the last renewal,
// by the etcd leader's clock; the holder counts from t0, read before it
// sent that renewal, by its own monotonic clock).
func FenceMargin(ttl time.Duration) time.Duration { return leasekit.FenceMargin(ttl) }

// RenewInterval is how often a holder renews its lease and refreshes its
// clock report: TTL/3, so two renewals may fail before the fence.
func RenewInterval(ttl time.Duration) time.Duration { return leasekit.RenewInterval(ttl) }

// validity is how long after t0 a renewal sent at t0, for a lease granted
// for grantedSec seconds, surely keeps the lease: the shorter of the
// configured and the granted TTL, less the margin.
func (l *Lease) validity(grantedSec int64) time.Duration {
	ttl := l.o.TTL
	if g := time.Duration(grantedSec) * time.Second; g < ttl {
		ttl = g
	}
	return leasekit.Validity(ttl)
}
