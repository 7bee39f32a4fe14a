package leasekit

import "time"

// RetryInterval is the pause between attempts while the coordinator
// fails: renewals and re-acquisition retry this fast, so an outage
// shorter than the fencing slack goes unnoticed.
const RetryInterval = 500 * time.Millisecond

// FenceMargin is how long before the coordinator could expire a lease its
// holder stops issuing: 1% of ttl plus 100 ms.
//
// The coordinator expires a lease no earlier than TTL after it received
// the last renewal, measured by its own clock; the holder counts from t0,
// read before it sent that renewal, by its own monotonic clock. The only
// error left is the two clocks' rates: quartz drifts well under 0.01% and
// NTP slews at most 0.05%, so 1% is a wide allowance, and the 100 ms floor
// keeps short TTLs clear of scheduler hiccups between reading the clock and
// stamping an ID.
func FenceMargin(ttl time.Duration) time.Duration { return ttl/100 + 100*time.Millisecond }

// RenewInterval is how often a holder renews its lease: TTL/3, so two
// renewals may fail before the fence.
func RenewInterval(ttl time.Duration) time.Duration { return ttl / 3 }

// Validity is how long after t0 a renewal sent at t0 surely keeps a lease
// of ttl: ttl less the margin.
func Validity(ttl time.Duration) time.Duration { return ttl - FenceMargin(ttl) }
