package leasekit

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Backend is what a coordinator (etcd, PostgreSQL) does for the Engine:
// storage and its atomicity, none of the rules. Every method bounds its
// I/O by ctx and DialTimeout; a coordinator that does not answer gives an
// UnreachableError, a claim found gone an error matching ErrNotHeld.
type Backend interface {
	// Open makes what the backend needs (a client, a pool) unless the
	// caller gave it; Close closes only what Open made. now is the service
	// clock (nanoseconds), for clock checks and reports.
	Open(ctx context.Context, now func() int64) error
	Close()
	// CheckClock refuses this node's clock when out of line with the
	// coordinator's (a *ClockSkewError).
	CheckClock(ctx context.Context) error
	// NewToken starts a claim: etcd grants a lease, PostgreSQL draws a
	// fencing token. ttl is what the coordinator granted.
	NewToken(ctx context.Context) (token int64, ttl time.Duration, err error)
	// TryClaim takes id under token if nobody holds it.
	TryClaim(ctx context.Context, token, id int64) (Claimed, error)
	// Renew extends c; ttl is what the coordinator granted.
	Renew(ctx context.Context, c Claim) (ttl time.Duration, err error)
	// Held reads whether c still holds its id, and the id's mark.
	Held(ctx context.Context, c Claim) (markMs int64, err error)
	// StoreMark stores ms as the id's mark, only while c holds it.
	StoreMark(ctx context.Context, c Claim, ms int64) error
	// Release gives c up; its mark stays.
	Release(ctx context.Context, c Claim) error
}

// Claim names a claim to its backend.
type Claim struct {
	Machine int64
	Token   int64  // etcd's lease id, PostgreSQL's fencing token
	Cluster uint64 // etcd's cluster id; 0 when unknown
}

// Claimed is what TryClaim found.
type Claimed struct {
	OK   bool
	Mark int64 // the id's mark, Unix ms; 0 when none
	// MarkLost: the id was held before, but no mark of it is left (deleted
	// by hand, a restored backup): its last holder may have issued up to
	// its validity, so the claim starts above now + TTL + lead.
	MarkLost bool
	Taken    map[int64]bool // not OK: the ids held now
	Cluster  uint64
}

// Config is what the Engine needs of a lease's options.
type Config struct {
	Provider    string // the package, in logs and errors: "etcdlease"
	Coordinator string // in logs: "etcd", "PostgreSQL"
	Marks       string // where the marks are kept, in errors
	Claims      string // where the claims are kept, in errors
	Endpoints   string // names the coordinator in the saved state (no password)
	Prefix      string
	NodeName    string
	TTL         time.Duration
	DialTimeout time.Duration
	Range       Range
	Logger      *slog.Logger
	LowestFirst bool // claim the lowest free id (tests)
}

// UnreachableError is the error of a coordinator that cannot be reached
// now (not one that refuses us): only then does a restart resume its
// claim without it. It matches intf.ErrUnavailable.
type UnreachableError struct{ Err error }

func (e UnreachableError) Error() string   { return e.Err.Error() }
func (e UnreachableError) Unwrap() []error { return []error{e.Err, intf.ErrUnavailable} }

// IsUnreachable tells whether err says the coordinator cannot be reached.
func IsUnreachable(err error) bool { return errors.As(err, new(UnreachableError)) }

// errTimedOut is the cause of a request whose own timeout expired.
var errTimedOut = errors.New("request timed out")

// Timeout bounds one request to the coordinator by d (the dial timeout).
func Timeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errTimedOut)
}

// TimedOut is a hint for the error of a request made with ctx: that it
// found no answer within d, or "".
func TimedOut(ctx context.Context, err error, d time.Duration) string {
	if errors.Is(context.Cause(ctx), errTimedOut) || errors.Is(err, errTimedOut) {
		return " (no answer within the dial timeout " + d.String() + ")"
	}
	return ""
}
