package leasekit

import (
	"context"
	"time"

	"github.com/vesta-go/vesta/service/backend/lease"
)

// Backend is a coordinator's storage and atomicity, none of the rules. The engine
// bounds each call by the dial timeout, but CheckClock's reads (etcd sleeps between
// two); no answer is an outage.Error, a claim found gone an error matching lease.ErrNotHeld.
type Backend interface {
	Open(ctx context.Context, now func() int64) error // makes the client or pool unless the caller gave one
	Close()                                           // closes only what Open made
	CheckClock(ctx context.Context) error             // a *clockskew.Error when out of line with the coordinator
	// SwapLayout stores rec as the fleet's layout record if it holds old (nil: no
	// record), and returns the record it holds then (rec if stored; nil: none).
	SwapLayout(ctx context.Context, old, rec []byte) (cur []byte, err error)
	// NewToken starts a claim: etcd grants a lease, PostgreSQL draws a token.
	NewToken(ctx context.Context) (token int64, ttl time.Duration, err error)
	TryClaim(ctx context.Context, token, id int64) (Claimed, error) // only if nobody holds id
	Renew(ctx context.Context, c Claim) (ttl time.Duration, err error)
	Held(ctx context.Context, c Claim) (markMs int64, err error)
	StoreMark(ctx context.Context, c Claim, ms int64) error // only while c holds its id
	Release(ctx context.Context, c Claim) error             // the mark stays
}

type Claim struct {
	Machine int64
	Token   int64  // etcd's lease id, PostgreSQL's fencing token
	Cluster uint64 // etcd's cluster id; 0 when unknown
}

type Claimed struct {
	OK       bool
	Mark     int64          // the id's mark, Unix ms; 0 when none
	MarkLost bool           // held before, but its mark is gone (deleted by hand, a restored backup)
	Taken    map[int64]bool // not OK: the ids held now
	Cluster  uint64
}

type Config struct {
	lease.Common        // filled (Common.Fill)
	Provider     string // the package, in logs and errors: "etcdlease"
	Coordinator  string // in logs: "etcd", "PostgreSQL"
	Marks        string // where the marks are kept, in errors
	Claims       string // where the claims are kept, in errors
	Layout       string // where the fleet's layout is kept, in errors: "key /vesta/layout"
	Endpoints    string // names the coordinator in the saved state (no password)
	LowestFirst  bool   // claim the lowest free id (tests)
}
