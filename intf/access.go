package intf

import (
	"errors"
	"fmt"
	"time"
)

// Errors of a server that checks who calls (an auth file of tokens with
// scopes and quotas, docs/security.md). They travel through every door:
// REST answers them 401, 403 and 429, RPC carries them as codes the Go
// client maps back, so errors.Is works the same everywhere. A client must
// not fail over on them: every server of a fleet shares the auth file, so
// another one would refuse the call the same way.
var (
	// ErrUnauthenticated: the call carried no token, a malformed one, or
	// one the server does not know.
	ErrUnauthenticated = errors.New("unauthenticated: no valid token")
	// ErrPermissionDenied: the token is known but lacks the scope the call
	// needs. The error is usually a *ScopeError naming the scope.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrRateLimited: the caller is over its quota of IDs per second. The
	// error is usually a *RateLimitError saying when to retry.
	ErrRateLimited = errors.New("rate limited")
)

// ScopeError says which scope a call lacked. It matches
// ErrPermissionDenied under errors.Is.
type ScopeError struct {
	Client string // the name of the token's client in the auth file
	Scope  string // the scope the call needs, e.g. "genid" or "segment:order"
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("permission denied: client %q lacks scope %s", e.Client, e.Scope)
}

// Is makes errors.Is(err, ErrPermissionDenied) true.
func (e *ScopeError) Is(target error) bool { return target == ErrPermissionDenied }

// RateLimitError says that a caller is over its quota and when a call of
// the same size will fit again. It matches ErrRateLimited under errors.Is.
type RateLimitError struct {
	// Client names the client of the auth file; "" for a limit per
	// remote address (no auth file).
	Client string
	// RetryAfter is how long until the call fits the quota again.
	RetryAfter time.Duration
	// Rate and Burst are the quota: IDs per second, and IDs above the
	// rate that may be taken at once.
	Rate  float64
	Burst int64
}

func (e *RateLimitError) Error() string {
	who := "this address"
	if e.Client != "" {
		who = fmt.Sprintf("client %q", e.Client)
	}
	return fmt.Sprintf("rate limited: %s is over its quota of %g IDs/s (burst %d); retry after %s",
		who, e.Rate, e.Burst, e.RetryAfter)
}

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }
