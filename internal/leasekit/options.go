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
	"github.com/vesta-go/vesta/service"
)

// Defaults and limits of both leases' options.
const (
	DefaultPrefix       = "/vesta" // etcd's key prefix, pglease's fleet name
	DefaultTable        = "vesta_machines"
	DefaultTTL          = time.Minute
	MinTTL              = 2 * time.Second
	MaxTTL              = time.Hour
	DefaultDialTimeout  = 5 * time.Second
	MinDialTimeout      = 10 * time.Millisecond
	MaxDialTimeout      = time.Minute
	DefaultMaxClockSkew = time.Second
	MinMaxClockSkew     = time.Millisecond
	MaxMaxClockSkew     = time.Hour
	RetryInterval       = 500 * time.Millisecond // between attempts while the coordinator fails
	VerifyInterval      = time.Second            // how often a holder reads that its claim is its own
)

// FenceMargin is how long before the coordinator could expire a claim its holder
// stops issuing: 1% of ttl (clock drift and NTP slew) plus 100 ms (scheduling).
func FenceMargin(ttl time.Duration) time.Duration { return ttl/100 + 100*time.Millisecond }

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
func Validity(ttl time.Duration) time.Duration { return ttl - FenceMargin(ttl) }

var (
	ErrAllTaken = fmt.Errorf("every machine id is held by a live node: %w", intf.ErrUnavailable)
	ErrNotHeld  = fmt.Errorf("machine id not held by this node: %w", intf.ErrFenced)
	ErrRunning  = errors.New("the lease is already running")
)

// OptionError names the wrong Options field (intf.ErrInvalidArgument).
type OptionError struct {
	Provider, Option, Value, Want string // Provider: "etcdlease"; Option: the field, e.g. "TTL"
	Err                           error  // the cause, e.g. reading a TLS file; may be nil
}

func (e *OptionError) Error() string {
	s := fmt.Sprintf("%s: option %s %q: want %s", e.Provider, e.Option, e.Value, e.Want)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *OptionError) Is(target error) bool { return target == intf.ErrInvalidArgument }
func (e *OptionError) Unwrap() error        { return e.Err }

// Check is nil when ok, else the OptionError of option.
func Check(ok bool, option, value, want string) *OptionError {
	if ok {
		return nil
	}
	return &OptionError{Option: option, Value: value, Want: want}
}

// Common are the options both leases take; a zero field takes its default.
type Common struct {
	Prefix string // names the fleet (default /vesta; etcd: of every key): nodes that must not share a machine id share it
	// TTL of a claim, whole seconds from 2s (default 1m): a node stops issuing
	// TTL − 1% − 100 ms after its last renewal; a dead node's id stays taken as long.
	TTL          time.Duration
	DialTimeout  time.Duration         // bounds connecting and every request to the coordinator (default 5s)
	NodeName     string                // in the claims and clock reports (default hostname-pid)
	MaxClockSkew time.Duration         // how far this clock may be off the coordinator's before it claims no id (default 1s)
	MachineRange *service.MachineRange // limits the ids this fleet claims (nil: all, 0-1023)
	Logger       *slog.Logger          // the lease's transitions; nil: slog.Default()
}

// Fill fills c's zero fields and checks them: own's checks (made once the
// defaults are in), then the timings and the range; the first failure is returned.
func (c *Common) Fill(provider string, own ...func() []*OptionError) error {
	c.Prefix, c.Logger = cmp.Or(c.Prefix, DefaultPrefix), cmp.Or(c.Logger, slog.Default())
	c.TTL, c.DialTimeout, c.MaxClockSkew = cmp.Or(c.TTL, DefaultTTL), cmp.Or(c.DialTimeout, DefaultDialTimeout), cmp.Or(c.MaxClockSkew, DefaultMaxClockSkew)
	if c.NodeName == "" {
		host, _ := os.Hostname()
		c.NodeName = fmt.Sprintf("%s-%d", cmp.Or(host, "node"), os.Getpid())
	}
	var checks []*OptionError
	for _, f := range own {
		checks = append(checks, f()...)
	}
	r := c.MachineRange
	checks = append(checks,
		Check(c.TTL >= MinTTL && c.TTL <= MaxTTL && c.TTL%time.Second == 0, "TTL", c.TTL.String(), fmt.Sprintf("whole seconds %s..%s", MinTTL, MaxTTL)),
		inRange("DialTimeout", c.DialTimeout, MinDialTimeout, MaxDialTimeout),
		inRange("MaxClockSkew", c.MaxClockSkew, MinMaxClockSkew, MaxMaxClockSkew),
		Check(r == nil || r.Valid(), "MachineRange", fmt.Sprint(r), fmt.Sprintf("first-last within 0-%d, first <= last", intf.MaxMachine)))
	for _, err := range checks {
		if err != nil {
			err.Provider = provider
			return err
		}
	}
	return nil
}

func inRange(option string, d, lo, hi time.Duration) *OptionError {
	return Check(d >= lo && d <= hi, option, d.String(), fmt.Sprintf("a duration %s..%s", lo, hi))
}

// refuse records in e a refused mark and skips its id; full: stop the attempt.
func refuse(e *service.MarksAheadError, machine, markMs, now int64, err error, skip map[int64]bool) (r service.MarkRefusal, full bool) {
	r = service.MarkRefusal{Machine: machine, MarkMillis: markMs, Ahead: time.Duration(markMs*int64(time.Millisecond) - now)}
	e.Refused, e.Err, skip[machine] = append(e.Refused, r), err, true
	return r, len(e.Refused) >= service.MaxMarkRefusals
}

// NextSkip is the skip set after an attempt failed with err: the ids refused so
// far, unless every free id was tried (then none).
func NextSkip(skip map[int64]bool, err error) map[int64]bool {
	var ahead *service.MarksAheadError
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
func Pick(r service.MachineRange, prefer int64, skip, taken map[int64]bool, lowest bool) (id int64, ok bool) {
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
