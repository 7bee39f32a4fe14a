package pglease

import (
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

var (
	// ErrAllTaken: every machine id of the range is held by a live node.
	// It matches intf.ErrUnavailable (and is etcdlease's).
	ErrAllTaken = leasekit.ErrAllTaken
	// ErrNotHeld: this node does not hold the machine id (any more): its
	// row carries another token. It matches intf.ErrFenced.
	ErrNotHeld = leasekit.ErrNotHeld
	// ErrRunning: Run was called on a Lease that runs already.
	ErrRunning = leasekit.ErrRunning
)

// OptionError names the Options field that is wrong. It matches
// intf.ErrInvalidArgument.
type OptionError = leasekit.OptionError

// MarksAheadError: one attempt gave back every id it claimed because the
// service refused their marks as too far ahead of its clock (see
// leasekit.MarksAheadError). It matches intf.ErrClockBehind.
type MarksAheadError = leasekit.MarksAheadError

// Range is a span of machine ids, First..Last inclusive.
type Range = leasekit.Range

// ClockSkewError: this node's clock differs from the database server's by
// more than Options.MaxClockSkew, so it refuses to claim a machine id. It
// matches intf.ErrClockBehind (also when the clock is ahead).
type ClockSkewError struct {
	// Skew is this clock minus the database's, after allowing for the
	// round trip: negative when behind.
	Skew  time.Duration
	Bound time.Duration // Options.MaxClockSkew
}

func (e *ClockSkewError) Error() string {
	dir, by := "ahead of", e.Skew
	if by < 0 {
		dir, by = "behind", -by
	}
	return fmt.Sprintf("pglease: this node's clock is at least %s %s the PostgreSQL server's, more than maxClockSkew %s: fix the time sync (NTP) of this host or of the database host",
		by.Round(time.Millisecond), dir, e.Bound)
}

// Is makes errors.Is(err, intf.ErrClockBehind) true.
func (e *ClockSkewError) Is(target error) bool { return target == intf.ErrClockBehind }
