package leasekit

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
)

// MaxMarkRefusals bounds how many claimed ids one attempt gives back
// because the service refused their mark (too far ahead of its clock):
// the attempt then fails with a *MarksAheadError. A running node retries,
// skipping the ids refused so far, so that a free id beyond them is found.
const MaxMarkRefusals = 16

// MarkRefusal is one claimed machine id given back because its high-water
// mark was too far ahead of this node's clock.
type MarkRefusal struct {
	Machine    int64
	MarkMillis int64         // the mark, Unix ms
	Ahead      time.Duration // how far ahead of the clock it was
}

// MarksAheadError: one attempt to claim an id gave back every id it
// claimed (up to MaxMarkRefusals) because the service refused their marks
// as too far ahead of its clock. It matches intf.ErrClockBehind (through
// Err, the service's last refusal).
type MarksAheadError struct {
	Refused []MarkRefusal // in the order claimed
	// Exhausted: no other free id was left to try.
	Exhausted bool
	Marks     string // where the marks are kept (an etcd key prefix, a table)
	Err       error
	// Provider names the lease package in the message ("etcdlease").
	Provider string
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

// Refuse records that the service refused machine's mark markMs at
// service clock now (err, matching intf.ErrClockBehind) in the attempt
// that e describes, and adds machine to skip. full: the attempt has given
// back MaxMarkRefusals ids and must stop.
func (e *MarksAheadError) Refuse(machine, markMs, now int64, err error, skip map[int64]bool) (r MarkRefusal, full bool) {
	r = MarkRefusal{Machine: machine, MarkMillis: markMs, Ahead: time.Duration(markMs*int64(time.Millisecond) - now)}
	e.Refused = append(e.Refused, r)
	e.Err = err
	skip[machine] = true
	return r, len(e.Refused) >= MaxMarkRefusals
}

// NextSkip is the skip set of the attempt after one that failed with err:
// the ids refused for their marks so far (skip and err's) unless every
// free id was tried — then nil, starting over, as marks once ahead may be
// passed by now.
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
