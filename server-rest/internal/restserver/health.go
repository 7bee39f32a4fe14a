package restserver

import (
	"net/http"

	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// readiness is what /readyz and the vesta_ready gauge report: ready, or
// why not.
func (s *Server) readiness() (string, *apiError) {
	if s.draining.Load() {
		return coremetrics.StatusStopping, errStopping
	}
	if _, open := s.segs.Open(); !open && !s.segs.Off() && s.segs.Down() == nil {
		return coremetrics.StatusStarting, errSegmentsStarting // opened first, before the ID service
	}
	// A segment store being retried (segs.Down) does not make the server
	// unready: readiness is about the Vesta IDs; /segment says 503. The
	// rest is the service's, decided as server-rpc decides it.
	h := coremetrics.ServiceReadiness(func() (service.Stats, bool) {
		if r := s.svc.Load(); r != nil {
			return r.Stats(), true
		}
		return service.Stats{}, false
	})
	switch h.Status {
	case coremetrics.StatusStarting:
		return h.Status, errStarting
	case coremetrics.StatusFenced:
		return h.Status, &apiError{Status: http.StatusServiceUnavailable, Err: intf.ErrFenced, Msg: h.Error}
	}
	return h.Status, nil
}

// health is readiness as /readyz and the status page say it.
func (s *Server) health() coremetrics.Health {
	status, why := s.readiness()
	if why != nil {
		return coremetrics.Health{Status: status, Error: why.Msg}
	}
	return coremetrics.Health{Status: status}
}
