// Package outage tells a dependency that does not answer (a coordinator, a
// database) from one that answers with a refusal: only the first is worth
// waiting out, on a saved claim or a store opened later. It links no
// driver: a database's error is read through its SQLState method.
package outage

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Error is a dependency that does not answer. It reads as Err and matches
// Err and intf.ErrUnavailable.
type Error struct{ Err error }

func (e Error) Error() string   { return e.Err.Error() }
func (e Error) Unwrap() []error { return []error{e.Err, intf.ErrUnavailable} }

// Is says that err is, or wraps, an Error.
func Is(err error) bool { return errors.As(err, new(Error)) }

// Silent says that err is no answer rather than a refusal: a network error,
// a timeout, or a PostgreSQL connection exception (SQLSTATE class 08) or
// shutdown (57P01..03).
func Silent(err error) bool {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		s := pe.SQLState()
		return strings.HasPrefix(s, "08") || s == "57P01" || s == "57P02" || s == "57P03"
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTimedOut)
}

var errTimedOut = errors.New("request timed out")

// Bound bounds one request by d (a dial timeout); TimedOut then says so.
func Bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errTimedOut)
}

// TimedOut is a hint for the error of a request made with a context from
// Bound: " (no answer within the dial timeout d)", or "".
func TimedOut(ctx context.Context, err error, d time.Duration) string {
	if errors.Is(context.Cause(ctx), errTimedOut) || errors.Is(err, errTimedOut) {
		return " (no answer within the dial timeout " + d.String() + ")"
	}
	return ""
}
