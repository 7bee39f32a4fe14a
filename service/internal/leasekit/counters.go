package leasekit

import (
	"fmt"
	"sync/atomic"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

var (
	// ErrAllTaken: every machine id of the range is held by a live node.
	// It matches intf.ErrUnavailable.
	ErrAllTaken = fmt.Errorf("every machine id is held by a live node: %w", intf.ErrUnavailable)
	// ErrNotHeld: this node does not hold the machine id (any more). It
	// matches intf.ErrFenced.
	ErrNotHeld = fmt.Errorf("machine id not held by this node: %w", intf.ErrFenced)
)

// Counters are the claim counters of a lease (service.LeaseStats).
type Counters struct {
	MarkRefusals atomic.Uint64 // ids given back because their mark was too far ahead
	Claims       atomic.Uint64 // ids claimed
	ClaimTxns    atomic.Uint64 // claim transactions, those that lost a race included
	Resumes      atomic.Uint64 // holds resumed from the data dir's state
}

// Stats returns the counters as service.LeaseStats.
func (c *Counters) Stats() service.LeaseStats {
	return service.LeaseStats{
		MarkRefusals: c.MarkRefusals.Load(),
		Claims:       c.Claims.Load(),
		ClaimTxns:    c.ClaimTxns.Load(),
		Resumes:      c.Resumes.Load(),
	}
}
