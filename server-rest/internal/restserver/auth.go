package restserver

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/server/ops"
	"github.com/vesta-go/vesta/intf"
)

// WithGuard checks every request but /healthz and /readyz with g: with
// an auth file, an Authorization: Bearer token of one of its clients
// (401), the route's scope (403: genid for /genid; decode for /expid,
// /makeid and /transtime; segment:<tag> for /segment/{tag} and
// /segment/{tag}/range; metrics for /metrics); and, for the routes that
// issue IDs, the quota of the client or of the remote address (429 with
// Retry-After). A batch counts as its size, a range as one call. nil (the default) checks nothing.
func WithGuard(g *access.Guard) Option { return func(s *Server) { s.guard = g } }

// guardedContext is the echo.Context a guarded route's handler gets: the
// request's context and its caller. Pooled: echo.Context.Set would
// allocate a map per request.
type guardedContext struct {
	echo.Context
	caller access.Caller
}

var guardedPool = sync.Pool{New: func() any { return new(guardedContext) }}

// guardRoute wraps the handler of a route that needs scope ("" when the
// handler checks it itself, /segment/{tag}) in authentication. The
// metrics need a token only with an auth file: a quota per address alone
// does not close them.
func (s *Server) guardRoute(path string, next echo.HandlerFunc) echo.HandlerFunc {
	scope, guarded := routeScopes[path]
	if s.guard == nil || !guarded {
		return next
	}
	return func(c echo.Context) error {
		if scope == access.ScopeMetrics && !s.guard.RequiresToken() {
			return next(c)
		}
		r := c.Request()
		caller, err := s.guard.AuthenticateHeader(r.Header[echo.HeaderAuthorization], r.RemoteAddr)
		if err != nil {
			return err
		}
		if scope != "" {
			if err := s.guard.Authorize(caller, scope, r.RemoteAddr); err != nil {
				return err
			}
		}
		gc := guardedPool.Get().(*guardedContext)
		gc.Context, gc.caller = c, caller
		err = next(gc)
		*gc = guardedContext{}
		guardedPool.Put(gc)
		return err
	}
}

// routeScopes are the scopes of the guarded routes; the operations surface
// checks its own (internal/server/ops). "" means the handler checks the scope,
// which depends on the tag.
var routeScopes = map[string]access.Scope{
	pathGenId:      access.ScopeGenId,
	pathExpId:      access.ScopeDecode,
	pathTransTime:  access.ScopeDecode,
	pathMakeId:     access.ScopeDecode,
	pathSegmentTag: "",
	pathSegRange:   "",
	pathSegment:    "",
	pathNumber:     "",
}

// caller is the request's caller; anonymous without a guard.
func caller(c echo.Context) access.Caller {
	if gc, ok := c.(*guardedContext); ok {
		return gc.caller
	}
	return access.Caller{}
}

// authorize checks the caller's scope s (a segment tag's).
func (s *Server) authorize(c echo.Context, sc access.Scope) error {
	if s.guard == nil {
		return nil
	}
	return s.guard.Authorize(caller(c), sc, c.Request().RemoteAddr)
}

// take takes n IDs (0: one) from the caller's quota; a caller back
// before the Retry-After it was given is held until then
// (access.Guard.TakeWait).
func (s *Server) take(c echo.Context, n int) (access.Grant, error) {
	if s.guard == nil {
		return access.Grant{}, nil
	}
	r := c.Request()
	return s.guard.TakeWait(r.Context(), caller(c), r.RemoteAddr, max(n, 1))
}

// accessError is the answer to a refusal of the guard, nil for other
// errors: the token and scope refusals as the operations surface answers
// them (ops.RefusalOf), and the quota's 429.
func accessError(err error) *apiError {
	if r, ok := ops.RefusalOf(err); ok {
		return &apiError{Status: r.Status, Header: r.Header, Scope: r.Scope, Msg: r.Msg, Err: err, WWWAuth: r.Challenge}
	}
	var rl *intf.RateLimitError
	if errors.As(err, &rl) {
		return &apiError{Status: http.StatusTooManyRequests, Msg: rl.Error(), Err: err, RetryAfter: rl.RetryAfter}
	}
	return nil
}

// retryAfterSeconds is a Retry-After header value: whole seconds, at
// least 1 (HTTP has no finer unit; the JSON body has the exact time).
func retryAfterSeconds(secs float64) string {
	return strconv.Itoa(max(1, int(math.Ceil(secs))))
}
