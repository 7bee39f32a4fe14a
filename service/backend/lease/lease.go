// Package lease holds what the machine-id leases of vesta-go (etcdlease,
// pglease) share with their users: the options both take (Common), their
// defaults and limits, the rule of the fence margin, and the errors both
// return. The one lease engine behind them is internal.
package lease

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
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
)

// FenceMargin is how long before the coordinator could expire a claim its holder
// stops issuing: 1% of ttl (clock drift and NTP slew) plus 100 ms (scheduling).
func FenceMargin(ttl time.Duration) time.Duration { return ttl/100 + 100*time.Millisecond }

// The errors both leases return.
var (
	// ErrAllTaken: every id of the range is held by a live node (intf.ErrUnavailable).
	ErrAllTaken = fmt.Errorf("every machine id is held by a live node: %w", intf.ErrUnavailable)
	// ErrNotHeld: the id's claim is gone or another node's (intf.ErrFenced).
	ErrNotHeld = fmt.Errorf("machine id not held by this node: %w", intf.ErrFenced)
	// ErrRunning: Run was called on a lease that runs already.
	ErrRunning = errors.New("the lease is already running")
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

// Common are the options both leases take; a zero field takes its default.
type Common struct {
	Prefix string // names the fleet (default /vesta; etcd: of every key): nodes that must not share a machine id share it
	// TTL of a claim, whole seconds from 2s (default 1m): a node stops issuing
	// TTL − 1% − 100 ms after its last renewal; a dead node's id stays taken as long.
	TTL          time.Duration
	DialTimeout  time.Duration    // bounds connecting and every request to the coordinator (default 5s)
	NodeName     string           // in the claims and clock reports (default hostname-pid)
	MaxClockSkew time.Duration    // how far this clock may be off the coordinator's before it claims no id (default 1s)
	MachineRange *machineid.Range // limits the ids this fleet claims (nil: all, 0-1023)
	Logger       *slog.Logger     // the lease's transitions; nil: slog.Default()
}

// refuse records in e a refused mark and skips its id; full: stop the attempt.

// ClockSkewError: this clock is off the other's (the coordinator's, or the
// median of the fleet's live nodes) by more than Bound, MaxClockSkew; the
// lease claims no id (intf.ErrClockBehind).
type ClockSkewError struct {
	Skew     time.Duration // this clock minus the other's: negative when behind
	Bound    time.Duration // MaxClockSkew
	Nodes    int           // the live nodes compared with (a fleet's reports)
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
