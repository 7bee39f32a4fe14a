package restserver

import (
	"net/http"

	"github.com/labstack/echo/v4"
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

// readyz is 200 once the ID service is constructed, 503 while it starts
// and again once shutdown begins.
func (s *Server) readyz(c echo.Context) error {
	switch {
	case s.draining.Load():
		return c.JSON(http.StatusServiceUnavailable, statusBody{Status: "stopping", Error: errStopping.Msg})
	case s.svc.Load() == nil:
		return c.JSON(http.StatusServiceUnavailable, statusBody{Status: "starting", Error: errStarting.Msg})
	}
	return c.JSON(http.StatusOK, statusBody{Status: "ready"})
}
