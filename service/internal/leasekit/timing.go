package leasekit

import (
	"fmt"
	"time"
)

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

// Defaults and limits of the timings both leases take (etcdlease's and
// pglease's Options), which service/config applies to its lease keys.
const (
	DefaultTTL          = time.Minute
	MinTTL              = 2 * time.Second
	MaxTTL              = time.Hour
	DefaultDialTimeout  = 5 * time.Second
	MinDialTimeout      = 10 * time.Millisecond
	MaxDialTimeout      = time.Minute
	DefaultMaxClockSkew = time.Second
	MinMaxClockSkew     = time.Millisecond
	MaxMaxClockSkew     = time.Hour
)

// Timings are a lease's TTL, request timeout and clock skew bound.
type Timings struct{ TTL, DialTimeout, MaxClockSkew *time.Duration }

// Fill sets the zero timings to their defaults.
func (t Timings) Fill() {
	for _, f := range []struct {
		d   *time.Duration
		def time.Duration
	}{{t.TTL, DefaultTTL}, {t.DialTimeout, DefaultDialTimeout}, {t.MaxClockSkew, DefaultMaxClockSkew}} {
		if *f.d == 0 {
			*f.d = f.def
		}
	}
}

// Checks validate the timings (after Fill).
func (t Timings) Checks() []func() *OptionError {
	return []func() *OptionError{
		func() *OptionError {
			ttl := *t.TTL
			return Check(ttl >= MinTTL && ttl <= MaxTTL && ttl%time.Second == 0, "TTL", ttl.String(),
				fmt.Sprintf("whole seconds %s..%s", MinTTL, MaxTTL))
		},
		func() *OptionError { return InRange("DialTimeout", *t.DialTimeout, MinDialTimeout, MaxDialTimeout) },
		func() *OptionError { return InRange("MaxClockSkew", *t.MaxClockSkew, MinMaxClockSkew, MaxMaxClockSkew) },
	}
}
