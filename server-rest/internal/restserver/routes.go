package restserver

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/server/callmetrics"
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

// staticRoutes are the routes without a path parameter, by path: serveHTTP
// finds them without Echo's router.
type staticRoutes map[string]*route

// route is one endpoint as served: its handler, behind its guard, and its
// series.
type route struct {
	s    *Server
	path string // as Echo routes it: c.Path()
	rm   *callmetrics.Series
	h    echo.HandlerFunc
}

// newEcho registers the routes, each one function (route.serve) that runs
// the body limit, panic recovery and the handler under instrumentation.
// There is no middleware: Echo builds middleware closures again for every
// request (global and route-level alike), which the hot path should not
// pay for. What matches no route (404, 405) reaches handleUnrouted, which
// counts it. It also files the routes without a path parameter by path
// (staticRoutes).
func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleUnrouted
	e.IPExtractor = echo.ExtractIPDirect()
	s.static = staticRoutes{}
	for _, ep := range endpoints {
		h, path := ep.h, echoPath(ep.path)
		rt := &route{s: s, path: path, rm: s.metrics.routes[path],
			h: s.guardRoute(ep.path, func(c echo.Context) error { return h(s, c) })}
		e.GET(path, rt.serve)
		if !strings.Contains(path, ":") {
			s.static[path] = rt
		}
	}
	return e
}

// serveHTTP serves a request with Echo, or, for a GET of a path without a
// path parameter, finds its route by the path alone: what Echo's router
// would find, for a map lookup.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.RawPath == "" {
		if rt := s.static[r.URL.Path]; rt != nil {
			c := s.echo.AcquireContext()
			c.Reset(r, w)
			c.SetPath(rt.path)
			_ = rt.serve(c)
			s.echo.ReleaseContext(c)
			return
		}
	}
	s.echo.ServeHTTP(w, r)
}
