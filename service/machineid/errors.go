package machineid

import (
	"fmt"
	"strings"
	"time"
)

// The errors a Lease returns out of New, whichever its coordinator.

// MaxMarkRefusals is how many ids a lease's attempt gives back for their marks.
const MaxMarkRefusals = 16

// MarkRefusal is an id given back because its mark was too far ahead.
type MarkRefusal struct {
	Machine    int64
	MarkMillis int64         // the mark, Unix ms
	Ahead      time.Duration // how far ahead of the clock it was
}

// MarksAheadError: an attempt gave back every id it claimed (up to
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
