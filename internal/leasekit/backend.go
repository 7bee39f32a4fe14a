package leasekit

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Backend is a coordinator's storage and its atomicity, none of the rules.
// Each method bounds its I/O by ctx and DialTimeout; no answer is an
// UnreachableError, a claim found gone an error matching ErrNotHeld.
type Backend interface {
	Open(ctx context.Context, now func() int64) error // makes the client or pool unless the caller gave one
	Close()                                           // closes only what Open made
	CheckClock(ctx context.Context) error             // a *ClockSkewError when out of line with the coordinator
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
	Provider    string // the package, in logs and errors: "etcdlease"
	Coordinator string // in logs: "etcd", "PostgreSQL"
	Marks       string // where the marks are kept, in errors
	Claims      string // where the claims are kept, in errors
	Endpoints   string // names the coordinator in the saved state (no password)
	Prefix      string
	NodeName    string
	TTL         time.Duration
	DialTimeout time.Duration
	Range       *Range // nil: FullRange
	Logger      *slog.Logger
	LowestFirst bool // claim the lowest free id (tests)
}

// UnreachableError is a coordinator that cannot be reached now (not one
// that refuses us): only then does a restart resume its claim without it.
type UnreachableError struct{ Err error }

func (e UnreachableError) Error() string   { return e.Err.Error() }
func (e UnreachableError) Unwrap() []error { return []error{e.Err, intf.ErrUnavailable} }

func IsUnreachable(err error) bool { return errors.As(err, new(UnreachableError)) }

var errTimedOut = errors.New("request timed out")

// Timeout bounds one request to the coordinator by d (the dial timeout).
func Timeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errTimedOut)
}

// TimedOut is a hint for the error of a request made with ctx, or "".
func TimedOut(ctx context.Context, err error, d time.Duration) string {
	if errors.Is(context.Cause(ctx), errTimedOut) || errors.Is(err, errTimedOut) {
		return " (no answer within the dial timeout " + d.String() + ")"
	}
	return ""
}
