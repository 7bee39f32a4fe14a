package leasekit

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Defaults and limits of both leases' options (and of the lease keys).
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
	MaxMarkRefusals     = 16                     // ids one attempt gives back for their marks
)

// FenceMargin is how long before the coordinator could expire a claim its
// holder stops issuing: 1% of ttl (the clocks' rates: quartz drifts under
// 0.01%, NTP slews at most 0.05%) plus 100 ms (scheduler hiccups). The
// holder counts from t0, read before it sent the renewal.
func FenceMargin(ttl time.Duration) time.Duration { return ttl/100 + 100*time.Millisecond }

// RenewInterval is TTL/3: two renewals may fail before the fence.
func RenewInterval(ttl time.Duration) time.Duration { return ttl / 3 }

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

// Common fills the options both leases take (prefix, timings, node name,
// logger) and checks them with r and extra, returning the first failure
// named for provider.
func Common(provider string, prefix *string, ttl, dial, skew *time.Duration, node *string, r *Range, log **slog.Logger,
	extra ...func() *OptionError) error {
	for _, f := range []struct {
		d   *time.Duration
		def time.Duration
	}{{ttl, DefaultTTL}, {dial, DefaultDialTimeout}, {skew, DefaultMaxClockSkew}} {
		if *f.d == 0 {
			*f.d = f.def
		}
	}
	if *prefix == "" {
		*prefix = DefaultPrefix
	}
	if *node == "" {
		host, _ := os.Hostname()
		*node = fmt.Sprintf("%s-%d", cmp.Or(host, "node"), os.Getpid())
	}
	if *log == nil {
		*log = slog.Default()
	}
	inRange := func(option string, d, lo, hi time.Duration) func() *OptionError {
		return func() *OptionError {
			return Check(d >= lo && d <= hi, option, d.String(), fmt.Sprintf("a duration %s..%s", lo, hi))
		}
	}
	checks := append(extra, func() *OptionError {
		return Check(*ttl >= MinTTL && *ttl <= MaxTTL && *ttl%time.Second == 0, "TTL", ttl.String(), fmt.Sprintf("whole seconds %s..%s", MinTTL, MaxTTL))
	},
		inRange("DialTimeout", *dial, MinDialTimeout, MaxDialTimeout),
		inRange("MaxClockSkew", *skew, MinMaxClockSkew, MaxMaxClockSkew),
		func() *OptionError {
			return Check(r == nil || r.Valid(), "MachineRange", fmt.Sprint(r), fmt.Sprintf("first-last within 0-%d, first <= last", intf.MaxMachine))
		})
	for _, c := range checks {
		if err := c(); err != nil {
			err.Provider = provider
			return err
		}
	}
	return nil
}

// MarkRefusal is an id given back because its mark was too far ahead.
type MarkRefusal struct {
	Machine    int64
	MarkMillis int64         // the mark, Unix ms
	Ahead      time.Duration // how far ahead of the clock it was
}

// MarksAheadError: one attempt gave back every id it claimed (up to
// MaxMarkRefusals) for their marks (intf.ErrClockBehind, through Err).
type MarksAheadError struct {
	Refused   []MarkRefusal // in the order claimed
	Exhausted bool          // no other free id was left to try
	Marks     string        // where the marks are kept (an etcd key prefix, a table)
	Err       error         // the service's last refusal
	Provider  string
}

func (e *MarksAheadError) Error() string {
	ids := make([]string, len(e.Refused))
	for i, r := range e.Refused {
		ids[i] = fmt.Sprintf("%d (%s ahead)", r.Machine, r.Ahead.Round(time.Millisecond))
	}
	why := fmt.Sprintf("the most one attempt tries (%d)", MaxMarkRefusals)
	if e.Exhausted {
		why = "and no other machine id is free"
	}
	return fmt.Sprintf("%s: the high-water marks under %s of machine ids %s are further ahead of this node's clock than the service waits, %s: "+
		"fix this node's clock if it is behind, wait for the clock to pass the marks, raise maxClockBackwardWait, or — only when no ID above the current time was issued with those ids — lower the marks (last refusal: %v)",
		e.Provider, e.Marks, strings.Join(ids, ", "), why, e.Err)
}

func (e *MarksAheadError) Unwrap() error { return e.Err }

// refuse records a refused mark and skips its id; full: stop the attempt.
func (e *MarksAheadError) refuse(machine, markMs, now int64, err error, skip map[int64]bool) (r MarkRefusal, full bool) {
	r = MarkRefusal{Machine: machine, MarkMillis: markMs, Ahead: time.Duration(markMs*int64(time.Millisecond) - now)}
	e.Refused, e.Err, skip[machine] = append(e.Refused, r), err, true
	return r, len(e.Refused) >= MaxMarkRefusals
}

// NextSkip is the skip set after an attempt that failed with err: the ids
// refused so far, unless every free id was tried (then none: start over).
func NextSkip(skip map[int64]bool, err error) map[int64]bool {
	var ahead *MarksAheadError
	if !errors.As(err, &ahead) || ahead.Exhausted {
		return nil
	}
	next := maps.Clone(skip)
	if next == nil {
		next = map[int64]bool{}
	}
	for _, r := range ahead.Refused {
		next[r.Machine] = true
	}
	return next
}

// ClockSkewError: this node's clock is off the coordinator's by more than
// MaxClockSkew, so it claims nothing (intf.ErrClockBehind, also ahead).
type ClockSkewError struct {
	Skew     time.Duration // this clock minus the other's: negative when behind
	Bound    time.Duration // MaxClockSkew
	Nodes    int           // etcd: the live nodes compared with
	Provider string
	Against  string // "the median of 2 live node(s) (reports under /vesta/clocks/)"
}

func (e *ClockSkewError) Error() string {
	dir, by := "ahead of", e.Skew
	if by < 0 {
		dir, by = "behind", -by
	}
	return fmt.Sprintf("%s: this node's clock is at least %s %s %s, more than maxClockSkew %s: fix the time sync (NTP) of this host or of the others",
		e.Provider, by.Round(time.Millisecond), dir, e.Against, e.Bound)
}

func (e *ClockSkewError) Is(target error) bool { return target == intf.ErrClockBehind }
