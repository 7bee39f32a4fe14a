package etcdlease

import "time"

// retryInterval is the pause between attempts while etcd fails: renewals
// and re-acquisition retry this fast, and gRPC reconnects at most this far
// apart, so an outage shorter than the fencing slack goes unnoticed.
const retryInterval = 500 * time.Millisecond

// FenceMargin is how long before etcd could expire a lease its holder
// stops issuing: 1% of ttl plus 100 ms.
//
// etcd expires a lease no earlier than TTL after it received the last
// renewal, measured by the etcd leader's clock; the holder counts from t0,
// read before it sent that renewal, by its own monotonic clock. The only
// error left is the two clocks' rates: quartz drifts well under 0.01% and
// NTP slews at most 0.05%, so 1% is a wide allowance, and the 100 ms floor
// keeps short TTLs clear of scheduler hiccups between reading the clock and
// stamping an ID.
func FenceMargin(ttl time.Duration) time.Duration { return ttl/100 + 100*time.Millisecond }

// RenewInterval is how often a holder renews its lease and refreshes its
// clock report: TTL/3, so two renewals may fail before the fence.
func RenewInterval(ttl time.Duration) time.Duration { return ttl / 3 }

// validity is how long after t0 a renewal sent at t0, for a lease granted
// for grantedSec seconds, surely keeps the lease: the shorter of the
// configured and the granted TTL, less the margin.
func (l *Lease) validity(grantedSec int64) time.Duration {
	ttl := l.o.TTL
	if g := time.Duration(grantedSec) * time.Second; g < ttl {
		ttl = g
	}
	return ttl - FenceMargin(ttl)
}
