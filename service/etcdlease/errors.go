package etcdlease

import (
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

var (
	// ErrAllTaken: every machine id 0..1023 is held by a live node. It
	// matches intf.ErrUnavailable.
	ErrAllTaken = leasekit.ErrAllTaken
	// ErrNotHeld: this node does not hold the machine id (any more): its
	// key is gone or belongs to another lease. It matches intf.ErrFenced.
	ErrNotHeld = leasekit.ErrNotHeld
	// ErrRunning: Run was called on a Lease that runs already; a Lease
	// serves one service.
	ErrRunning = leasekit.ErrRunning
)

// ClockSkewError: this node's clock differs from the live nodes' by more
// than Options.MaxClockSkew, so it refuses to claim a machine id. It
// matches intf.ErrClockBehind (also when the clock is ahead).
type ClockSkewError struct {
	// Skew is this clock minus the median of the live nodes' clocks, after
	// allowing for the age of their reports: negative when behind.
	Skew  time.Duration
	Nodes int           // live nodes compared with
	Bound time.Duration // Options.MaxClockSkew
	Where string        // the key prefix of the reports
}

func (e *ClockSkewError) Error() string {
	dir, by := "ahead of", e.Skew
	if by < 0 {
		dir, by = "behind", -by
	}
	return fmt.Sprintf("etcdlease: this node's clock is at least %s %s the median of %d live node(s) (reports under %s), more than maxClockSkew %s: fix the time sync (NTP) of this host or of the others",
		by.Round(time.Millisecond), dir, e.Nodes, e.Where, e.Bound)
}

// Is makes errors.Is(err, intf.ErrClockBehind) true.
func (e *ClockSkewError) Is(target error) bool { return target == intf.ErrClockBehind }

// OptionError names the Options field that is wrong. It matches
// intf.ErrInvalidArgument.
type OptionError = leasekit.OptionError

// MarkRefusal is one claimed machine id given back because its high-water
// mark was too far ahead of this node's clock.
type MarkRefusal = leasekit.MarkRefusal

// MarksAheadError: one attempt to claim an id gave back every id it
// claimed (up to MaxMarkRefusals) because the service refused their marks
// as too far ahead of its clock. It matches intf.ErrClockBehind (through
// Err, the service's last refusal).
type MarksAheadError = leasekit.MarksAheadError

// RangeOverlapError: this fleet's machine range overlaps the range of a
// fleet under another prefix of the same etcd cluster, registered first.
// Two such fleets could hand out one machine id twice. It matches
// intf.ErrInvalidArgument.
type RangeOverlapError struct {
	Prefix      string
	Range       Range
	OtherPrefix string
	OtherRange  Range
}

func (e *RangeOverlapError) Error() string {
	return fmt.Sprintf("etcdlease: machineRange %s of prefix %s overlaps machineRange %s of prefix %s, live in the same etcd cluster: give the fleets disjoint ranges",
		e.Range, e.Prefix, e.OtherRange, e.OtherPrefix)
}

// Is makes errors.Is(err, intf.ErrInvalidArgument) true.
func (e *RangeOverlapError) Is(target error) bool { return target == intf.ErrInvalidArgument }
