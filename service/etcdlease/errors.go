package etcdlease

import (
	"fmt"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// The errors and error types are the lease engine's, shared with pglease.
var (
	// ErrAllTaken: every machine id of the range is held by a live node
	// (matches intf.ErrUnavailable).
	ErrAllTaken = leasekit.ErrAllTaken
	// ErrNotHeld: this node does not hold the machine id (any more): its
	// key is gone or belongs to another lease (matches intf.ErrFenced).
	ErrNotHeld = leasekit.ErrNotHeld
	// ErrRunning: Run was called on a Lease that runs already.
	ErrRunning = leasekit.ErrRunning
)

type (
	// OptionError names the Options field that is wrong (matches
	// intf.ErrInvalidArgument).
	OptionError = leasekit.OptionError
	// ClockSkewError: this node's clock differs from the median of the
	// live nodes' by more than Options.MaxClockSkew, so it refuses to claim
	// an id (matches intf.ErrClockBehind, also when ahead).
	ClockSkewError = leasekit.ClockSkewError
	// MarkRefusal is one claimed id given back because its mark was too
	// far ahead of this node's clock.
	MarkRefusal = leasekit.MarkRefusal
	// MarksAheadError: one attempt gave back every id it claimed (up to
	// MaxMarkRefusals) for their marks (matches intf.ErrClockBehind).
	MarksAheadError = leasekit.MarksAheadError
)

// RangeOverlapError: this fleet's machine range overlaps the range of a
// fleet under another prefix of the same etcd cluster, registered first:
// the two could hand out one id twice. It matches intf.ErrInvalidArgument.
type RangeOverlapError struct {
	Prefix, OtherPrefix string
	Range, OtherRange   Range
}

func (e *RangeOverlapError) Error() string {
	return fmt.Sprintf("etcdlease: machineRange %s of prefix %s overlaps machineRange %s of prefix %s, live in the same etcd cluster: give the fleets disjoint ranges",
		e.Range, e.Prefix, e.OtherRange, e.OtherPrefix)
}

func (e *RangeOverlapError) Is(target error) bool { return target == intf.ErrInvalidArgument }
