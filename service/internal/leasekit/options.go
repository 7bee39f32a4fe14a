package leasekit

import (
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// OptionError names the Options field of a lease that is wrong. It
// matches intf.ErrInvalidArgument.
type OptionError struct {
	// Provider names the lease package in the message ("etcdlease").
	Provider string
	Option   string // the field, e.g. "TTL"
	Value    string
	Want     string
	Err      error // the cause, e.g. reading a TLS file; may be nil
}

func (e *OptionError) Error() string {
	s := fmt.Sprintf("%s: option %s %q: want %s", e.Provider, e.Option, e.Value, e.Want)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes errors.Is(err, intf.ErrInvalidArgument) true.
func (e *OptionError) Is(target error) bool { return target == intf.ErrInvalidArgument }

func (e *OptionError) Unwrap() error { return e.Err }

// Check is nil when ok, else the OptionError of option.
func Check(ok bool, option, value, want string) *OptionError {
	if ok {
		return nil
	}
	return &OptionError{Option: option, Value: value, Want: want}
}

// InRange checks that the duration option d lies in lo..hi.
func InRange(option string, d, lo, hi time.Duration) *OptionError {
	return Check(d >= lo && d <= hi, option, d.String(), fmt.Sprintf("a duration %s..%s", lo, hi))
}

// CheckAll runs the checks in order and returns the first failure, naming
// provider.
func CheckAll(provider string, checks ...func() *OptionError) *OptionError {
	for _, c := range checks {
		if err := c(); err != nil {
			err.Provider = provider
			return err
		}
	}
	return nil
}

// NodeName is name, or else hostname-pid (node when the host name is
// unknown), for a lease's Options.NodeName.
func NodeName(name string, pid int) string {
	if name != "" {
		return name
	}
	host := Hostname()
	if host == "" {
		host = "node"
	}
	return fmt.Sprintf("%s-%d", host, pid)
}

// CheckRange validates a lease's Options.MachineRange (nil: all ids).
func CheckRange(r *Range) func() *OptionError {
	return func() *OptionError {
		if r == nil {
			return nil
		}
		return Check(r.Valid(), "MachineRange", r.String(), fmt.Sprintf("first-last within 0-%d, first <= last", intf.MaxMachine))
	}
}

// Defaults of the names the leases take. They are here, with the timings'
// (timing.go), rather than in etcdlease or pglease so that service/config
// shows them in --help without linking either coordinator's client.
const (
	// DefaultPrefix is both leases' Options.Prefix: the fleet's key prefix
	// in etcd, its name in pglease's table.
	DefaultPrefix = "/vesta"
	// DefaultTable is pglease's Options.Table.
	DefaultTable = "vesta_machines"
)
