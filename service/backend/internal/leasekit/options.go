package leasekit

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// Timings of the engine alone.
const (
	RetryInterval  = 500 * time.Millisecond // between attempts while the coordinator fails
	VerifyInterval = time.Second            // how often a holder reads that its claim is its own
)

// RenewInterval is how often a holder renews its claim: TTL/40 within 250 ms..1 s,
// so that the outage it rides out (RideOut) is nearly the whole validity.
func RenewInterval(ttl time.Duration) time.Duration {
	return min(ttl/3, max(250*time.Millisecond, min(ttl/40, time.Second)))
}

// MarkInterval is the longest a holder goes between two mark writes: TTL/3, at most 20 s.
func MarkInterval(ttl time.Duration) time.Duration { return min(ttl/3, 20*time.Second) }

// MarkSpan is how far ahead of a claim's validity its mark is kept: at least keep
// (two renewals: the next one's validity is covered before a mark write an outage
// may fail), stored step further when within keep, so that one write covers a
// MarkInterval of renewals. A crashed holder's mark may thus run keep+step past
// its validity (see docs/operations.md).
func MarkSpan(ttl time.Duration) (keep, step time.Duration) {
	r := RenewInterval(ttl)
	return 2 * r, MarkInterval(ttl) - r
}

// RideOut is the longest coordinator outage a holder surely issues through: the
// validity less a renewal interval and one attempt of the renewal that ends it.
func RideOut(ttl, dial time.Duration) time.Duration {
	return Validity(ttl) - RenewInterval(ttl) - attempt(ttl, dial)
}

// Validity is how long after t0 a renewal sent at t0 surely keeps a claim.
func Validity(ttl time.Duration) time.Duration { return ttl - lease.FenceMargin(ttl) }

func refuse(e *machineid.MarksAheadError, machine, markMs, now int64, err error, skip map[int64]bool) (r machineid.MarkRefusal, full bool) {
	r = machineid.MarkRefusal{Machine: machine, MarkMillis: markMs, Ahead: time.Duration(markMs*int64(time.Millisecond) - now)}
	e.Refused, e.Err, skip[machine] = append(e.Refused, r), err, true
	return r, len(e.Refused) >= machineid.MaxMarkRefusals
}

// NextSkip is the skip set after an attempt failed with err: the ids refused so
// far, unless every free id was tried (then none).
func NextSkip(skip map[int64]bool, err error) map[int64]bool {
	var ahead *machineid.MarksAheadError
	if !errors.As(err, &ahead) || ahead.Exhausted {
		return nil
	}
	next := maps.Collect(maps.All(skip)) // a copy, never nil
	for _, r := range ahead.Refused {
		next[r.Machine] = true
	}
	return next
}

// Pick chooses prefer if free, else a random id of r neither taken nor skipped
// (nodes starting at once spread); lowest picks the lowest (tests).
func Pick(r machineid.Range, prefer int64, skip, taken map[int64]bool, lowest bool) (id int64, ok bool) {
	free := func(id int64) bool { return r.Contains(id) && !taken[id] && !skip[id] }
	if prefer >= 0 && free(prefer) {
		return prefer, true
	}
	var ids []int64
	for id := r.First; id <= r.Last; id++ {
		if free(id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	if lowest {
		return ids[0], true
	}
	return ids[rand.IntN(len(ids))], true
}

// Check is nil when ok, else the OptionError of option.
func Check(ok bool, option, value, want string) *lease.OptionError {
	if ok {
		return nil
	}
	return &lease.OptionError{Option: option, Value: value, Want: want}
}

// Fill fills c's zero fields (the leases' defaults) and checks them: own's checks (made once the
// defaults are in), then the timings and the range; the first failure is returned.
func Fill(c *lease.Common, provider string, own ...func() []*lease.OptionError) error {
	c.Prefix, c.Logger = cmp.Or(c.Prefix, lease.DefaultPrefix), cmp.Or(c.Logger, slog.Default())
	c.TTL, c.DialTimeout, c.MaxClockSkew = cmp.Or(c.TTL, lease.DefaultTTL), cmp.Or(c.DialTimeout, lease.DefaultDialTimeout), cmp.Or(c.MaxClockSkew, lease.DefaultMaxClockSkew)
	if c.NodeName == "" {
		host, _ := os.Hostname()
		c.NodeName = fmt.Sprintf("%s-%d", cmp.Or(host, "node"), os.Getpid())
	}
	var checks []*lease.OptionError
	for _, f := range own {
		checks = append(checks, f()...)
	}
	r := c.MachineRange
	checks = append(checks,
		Check(c.TTL >= lease.MinTTL && c.TTL <= lease.MaxTTL && c.TTL%time.Second == 0, "TTL", c.TTL.String(), fmt.Sprintf("whole seconds %s..%s", lease.MinTTL, lease.MaxTTL)),
		inRange("DialTimeout", c.DialTimeout, lease.MinDialTimeout, lease.MaxDialTimeout),
		inRange("MaxClockSkew", c.MaxClockSkew, lease.MinMaxClockSkew, lease.MaxMaxClockSkew),
		Check(r == nil || r.Valid(), "MachineRange", fmt.Sprint(r), fmt.Sprintf("first-last within 0-%d, first <= last", intf.MaxMachine)))
	for _, err := range checks {
		if err != nil {
			err.Provider = provider
			return err
		}
	}
	return nil
}

func inRange(option string, d, lo, hi time.Duration) *lease.OptionError {
	return Check(d >= lo && d <= hi, option, d.String(), fmt.Sprintf("a duration %s..%s", lo, hi))
}
