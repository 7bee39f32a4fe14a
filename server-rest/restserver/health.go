package restserver

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/intf"
)

// statusBody is the JSON of /healthz and /readyz.
type statusBody struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// healthz says the process serves HTTP: always 200.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, statusBody{Status: "ok"})
}

// Readiness states, the status of /readyz.
const (
	statusReady    = "ready"
	statusStarting = "starting"
	statusFenced   = "fenced"
	statusStopping = "stopping"
)

// errFenced is the reason /readyz gives while the machine id lease is not
// held.
var errFenced = &apiError{Status: http.StatusServiceUnavailable, Err: intf.ErrFenced,
	Msg: "machine id lease not held (fenced): no IDs until it is held again, which happens by itself"}

// readiness is what /readyz and the vesta_ready gauge report: ready, or
// why not.
func (s *Server) readiness() (string, *apiError) {
	if s.draining.Load() {
		return statusStopping, errStopping
	}
	if s.seg.Load() == nil && !s.segmentsOff.Load() && s.segDown.Load() == nil {
		return statusStarting, errSegmentsStarting // opened first, before the ID service
	}
	// A segment store being retried (segDown) does not make the server
	// unready: readiness is about the Vesta IDs; /segment says 503.
	r := s.svc.Load()
	if r == nil {
		return statusStarting, errStarting
	}
	if !r.Stats().LeaseHeld {
		return statusFenced, errFenced
	}
	return statusReady, nil
}

// readyz is 200 once the ID service is constructed (and segment mode open),
// 503 while it starts, while its machine id lease is not held, and again
// once shutdown begins.
func (s *Server) readyz(c echo.Context) error {
	status, why := s.readiness()
	if why != nil {
		c.Response().Header().Set("Retry-After", "1")
		return c.JSON(http.StatusServiceUnavailable, statusBody{Status: status, Error: why.Msg})
	}
	return c.JSON(http.StatusOK, statusBody{Status: status})
}
