package machineid

import (
	"context"
	"time"
)

// A Lease hands out a machine id for a bounded time and can lose
// it, as an etcd lease does. With Settings.Lease set, New waits until the
// lease holds an id, and GenId fails with intf.ErrFenced whenever the lease
// is not surely valid.
//
// Uniqueness across holders rests on the lease's high-water mark: a holder
// never issues a time unit above the mark it stored for its machine id
// (StoreMark), and a new holder starts above the previous holder's mark.
//
// The lease logs its holds and losses (the service logs them only at
// debug level, so that each is read once).
type Lease interface {
	// Run acquires a machine id and keeps it until ctx is done, telling h
	// of every change. Before it returns it stops renewing and releases the
	// id. It returns ctx's error after a normal stop, or a fatal error.
	Run(ctx context.Context, h Holder) error
	// StoreMark durably stores, for machine, the latest Unix millisecond
	// IDs may be issued at. The service calls it ahead of the clock, and
	// with the exact last time at Close. It must fail when machine is not
	// the id currently held, and never store less than the mark the
	// current hold started from (its prevMarkMs): a Close racing a loss
	// and a new hold must not lower the mark a later holder waits past.
	StoreMark(ctx context.Context, machine int64, ms int64) error
}

// MarkSpan is what a Lease implements to have its mark kept
// ahead of its validity, so that a mark write failing after a renewal
// (the coordinator going down between the two) never stops the node
// before its fence. Without it the mark covers the validity alone.
type MarkSpan interface {
	// MarkSpan: the service stores the mark whenever it falls within keep
	// of the validity (make keep cover what the next renewal adds), and
	// then step further, so that one write serves about step of renewals.
	// A node that takes the id after its holder crashed may wait for up
	// to keep+step past the holder's validity.
	MarkSpan() (keep, step time.Duration)
}

// LeaseStats are the counters a Lease may keep (Stats.Lease).
type LeaseStats struct {
	// MarkRefusals counts the claimed ids given back because their
	// high-water mark was further ahead of the clock than the service
	// waits (MaxClockBackwardWait).
	MarkRefusals uint64
	// Claims counts the ids claimed; ClaimTxns the transactions they
	// took, those that lost a race to another node included.
	Claims, ClaimTxns uint64
	// Resumes counts the holds resumed after a restart from the state
	// kept in the data dir (LeaseState), the same id without a new claim.
	Resumes uint64
	// UncompactedRevisions is how many revisions the coordinator keeps
	// uncompacted (etcd; a lower bound, 0 when unknown).
	UncompactedRevisions int64
	// NoSpace: the coordinator refuses writes because its quota is full.
	NoSpace bool
}

// Holder is the service side of a Lease. Call Hold and Lost
// from one goroutine (a Lost during a Hold would be overwritten by it);
// Renewed may come from any goroutine.
type Holder interface {
	// Now is the service clock in nanoseconds: measure lease validity with
	// it (it is monotonic).
	Now() int64
	// Lead is how far ahead of its clock this service stores its marks
	// (3 s plus MaxBorrow): an earlier run on this data dir issued no ID
	// above the unit of the time it stopped plus its lead.
	Lead() time.Duration
	// Layout is what this service's IDs are made of besides the machine
	// id and the sequence: every node of a fleet needs the same, or two
	// nodes handing one id over issue the same IDs.
	Layout() Layout
	// Hold says the lease now holds machine, surely valid until validUntil
	// (Now() nanoseconds), and that its earlier holders may have issued IDs
	// up to prevMarkMs (Unix ms; 0 if never held). Hold waits for the clock
	// to pass prevMarkMs (up to MaxClockBackwardWait, else it returns an
	// error wrapping intf.ErrClockBehind: release the id), stores a mark
	// ahead and resumes issuing.
	Hold(ctx context.Context, machine int64, validUntil int64, prevMarkMs int64) error
	// Renewed extends the validity of the id held.
	Renewed(validUntil int64)
	// Lost stops issuing at once: the id is no longer surely held.
	Lost()
	// LeaseState returns what SaveLeaseState stored in the data dir's
	// previous run, or nil: none saved, no data dir, or a dir whose mark
	// was reset. A state returned is trustworthy with the mark beside it:
	// every ID of the previous run lies below the unit this service starts
	// above, so a lease resumed from it (the same id, still held) needs no
	// wait for that run's marks.
	LeaseState() []byte
	// SaveLeaseState durably stores b in the data dir for the next run
	// (nil removes it); without a data dir it does nothing.
	SaveLeaseState(b []byte) error
}
