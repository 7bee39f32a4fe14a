package leasekit

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
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
	MaxMarkRefusals     = 16                     // ids one attempt gives back for their marks
)

// FenceMargin is how long before the coordinator could expire a claim its
// holder stops issuing: 1% of ttl (quartz drifts under 0.01%, NTP slews at
// most 0.05%) plus 100 ms (scheduler hiccups).
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

// Common fills the options both leases take and checks them: first the
// lease's own checks, made once the defaults are in, then the timings and r.
// The first failure is named for provider.
func Common(provider string, prefix *string, ttl, dial, skew *time.Duration, node *string, r *Range, log **slog.Logger,
	own ...func() []*OptionError) error {
	*prefix, *log = cmp.Or(*prefix, DefaultPrefix), cmp.Or(*log, slog.Default())
	*ttl, *dial, *skew = cmp.Or(*ttl, DefaultTTL), cmp.Or(*dial, DefaultDialTimeout), cmp.Or(*skew, DefaultMaxClockSkew)
	if *node == "" {
		host, _ := os.Hostname()
		*node = fmt.Sprintf("%s-%d", cmp.Or(host, "node"), os.Getpid())
	}
	var checks []*OptionError
	for _, f := range own {
		checks = append(checks, f()...)
	}
	checks = append(checks,
		Check(*ttl >= MinTTL && *ttl <= MaxTTL && *ttl%time.Second == 0, "TTL", ttl.String(), fmt.Sprintf("whole seconds %s..%s", MinTTL, MaxTTL)),
		inRange("DialTimeout", *dial, MinDialTimeout, MaxDialTimeout),
		inRange("MaxClockSkew", *skew, MinMaxClockSkew, MaxMaxClockSkew),
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
	next := maps.Collect(maps.All(skip)) // a copy, never nil
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

// Skew is how far this clock's reading, between lo and hi, lies outside the
// other's, between otherLo and otherHi: negative when behind, 0 if they meet.
func Skew(lo, hi, otherLo, otherHi int64) time.Duration {
	if hi < otherLo {
		return time.Duration(hi - otherLo)
	}
	return time.Duration(max(lo-otherHi, 0))
}

// Range is a span of machine ids, First..Last inclusive.
type Range struct{ First, Last int64 }

var FullRange = Range{0, intf.MaxMachine}

func (r Range) String() string         { return fmt.Sprintf("%d-%d", r.First, r.Last) }
func (r Range) Size() int64            { return r.Last - r.First + 1 }
func (r Range) Contains(id int64) bool { return id >= r.First && id <= r.Last }
func (r Range) Overlaps(o Range) bool  { return r.First <= o.Last && o.First <= r.Last }
func (r Range) Valid() bool            { return r.First >= 0 && r.First <= r.Last && r.Last <= intf.MaxMachine }
func (r Range) free(skip, taken map[int64]bool, id int64) bool {
	return r.Contains(id) && !taken[id] && !skip[id]
}

// ParseRange reads "first-last" (e.g. "0-511") or a single id.
func ParseRange(s string) (Range, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		hi = lo
	}
	first, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
	last, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
	r := Range{first, last}
	if err1 != nil || err2 != nil || !r.Valid() {
		return Range{}, fmt.Errorf("%w: machine range %q: want first-last within 0-%d, first <= last (e.g. 0-511)", intf.ErrInvalidArgument, s, intf.MaxMachine)
	}
	return r, nil
}

// Pick chooses prefer if free, else a random id of r neither taken (nil:
// unlisted) nor in skip, so that nodes starting at once spread; lowest: tests.
func Pick(r Range, prefer int64, skip, taken map[int64]bool, lowest bool) (id int64, ok bool) {
	if prefer >= 0 && r.free(skip, taken, prefer) {
		return prefer, true
	}
	if !lowest && int(r.Size())-len(skip)-len(taken) > int(r.Size())/4 {
		for range 16 { // mostly free: a few draws find one
			if id := r.First + rand.Int64N(r.Size()); r.free(skip, taken, id) {
				return id, true
			}
		}
	}
	var ids []int64
	for id := r.First; id <= r.Last; id++ {
		if r.free(skip, taken, id) {
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
