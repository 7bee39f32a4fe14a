package restserver

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// routeMetrics holds one route's series, the 200 counter resolved ahead so
// that a successful request costs no label lookup (nil for unmatched).
type routeMetrics struct {
	name     string
	latency  prometheus.Observer
	ok       prometheus.Counter
	requests *prometheus.CounterVec
}

// instrument wraps one route's handler: it answers any error the handler
// returns, then records the request with its final status and latency.
func (s *Server) instrument(rm *routeMetrics, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := ctxtime.Monotonic()
		if err := next(c); err != nil {
			s.handleError(err, c)
		}
		rm.latency.Observe((ctxtime.Monotonic() - start).Seconds())
		rm.count(c.Response().Status)
		return nil
	}
}

// count adds one request with status code to the route's counter.
func (rm *routeMetrics) count(code int) {
	if code == http.StatusOK && rm.ok != nil {
		rm.ok.Inc()
		return
	}
	rm.requests.WithLabelValues(rm.name, strconv.Itoa(code)).Inc()
}

// handleUnrouted is the Echo HTTPErrorHandler. Only what matched no route
// reaches it (every route's instrument answers its own errors): it answers
// 404 or 405 and counts it, under the route for a 405 and as unmatched for
// a 404. Its latency is not observed.
func (s *Server) handleUnrouted(err error, c echo.Context) {
	s.handleError(err, c)
	code := c.Response().Status
	rm, ok := s.metrics.routes[c.Path()]
	if !ok || code == http.StatusNotFound {
		rm = s.metrics.routes[unmatchedRoute]
	}
	rm.count(code)
}
