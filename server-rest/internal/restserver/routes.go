package restserver

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/vesta-go/vesta/internal/server/ops"
)

// bodyLimit caps a request body in bytes: no endpoint takes one.
const bodyLimit = 4 << 10

// Paths of the endpoints, as in Vesta and docs/openapi.yaml: a path
// parameter is written {name}. They are also the metrics' route labels.
const (
	pathGenId      = "/genid"
	pathExpId      = "/expid"
	pathTransTime  = "/transtime"
	pathMakeId     = "/makeid"
	pathSegmentTag = "/segment/{tag}"
	pathSegRange   = "/segment/{tag}/range"
	pathSegment    = "/segment"
	pathNumber     = "/number/{tag}"
)

// endpoint is a route and its handler.
type endpoint struct {
	path string
	h    func(*Server, echo.Context) error
}

// endpoints lists every route, in documentation order; all are GET. The
// operations surface's (internal/server/ops: health, readiness, metrics, the
// status page) come last, served by the one handler both servers share.
var endpoints = append([]endpoint{
	{pathGenId, (*Server).genId},
	{pathExpId, (*Server).expId},
	{pathTransTime, (*Server).transTime},
	{pathMakeId, (*Server).makeId},
	{pathSegmentTag, (*Server).nextSegment},
	{pathSegRange, (*Server).segmentRange},
	{pathSegment, (*Server).listSegments},
	{pathNumber, (*Server).nextNumber},
}, opsEndpoints()...)

func opsEndpoints() []endpoint {
	eps := make([]endpoint, len(ops.Paths))
	for i, p := range ops.Paths {
		eps[i] = endpoint{p, (*Server).serveOps}
	}
	return eps
}

// echoPath writes a documented path the way Echo routes it: {name} as
// :name.
func echoPath(path string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(path)
}

// endpointPaths lists the paths, for the 404 message.
func endpointPaths() []string {
	paths := make([]string, len(endpoints))
	for i, ep := range endpoints {
		paths[i] = ep.path
	}
	return paths
}

// newEcho registers the routes. Each route's handler is wrapped once, here,
// in instrumentation (outermost: it writes any error itself, so it sees the
// final status), Recover and the body limit. There is no global middleware:
// Echo builds middleware closures again for every request (global and
// route-level alike), which the hot path should not pay for. What matches
// no route (404, 405) reaches handleUnrouted, which counts it.
func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleUnrouted
	e.IPExtractor = echo.ExtractIPDirect()
	recoverPanics := middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableErrorHandler: true, // return the panic to instrument, which answers it
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("rest: panic in handler", "path", c.Request().URL.Path, "err", err, "stack", string(stack))
			return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: err}
		},
	})
	for _, ep := range endpoints {
		h, route := ep.h, echoPath(ep.path)
		handler := s.guardRoute(ep.path, func(c echo.Context) error { return h(s, c) })
		e.GET(route, s.instrument(s.metrics.routes[route], recoverPanics(limitBody(handler))))
	}
	return e
}

// limitBody refuses a request body declared over bodyLimit, or sent
// chunked (its length unknown): no endpoint reads a body, so Echo's
// BodyLimit, which checks only what a handler reads, would let an endless
// chunked body through.
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if n := c.Request().ContentLength; n > bodyLimit || n < 0 {
			return echo.ErrStatusRequestEntityTooLarge
		}
		return next(c)
	}
}
