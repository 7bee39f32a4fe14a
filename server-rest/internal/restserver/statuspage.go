package restserver

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/ops"
	"github.com/vesta-go/vesta/internal/server/statuspage"
)

// WithMachineSource says where the machine id comes from, for the status
// page: the provider (property, ips, hostname, etcd) and where its key
// was set ("flag --machine").
func WithMachineSource(provider, source string) Option {
	return func(s *Server) { s.machineProvider, s.machineSource = provider, source }
}

// newOps builds the operations surface (internal/server/ops) over the server's
// state: readiness, the registry, and the status page over the service
// and segment mode as published and the /genid counter.
func (s *Server) newOps() (http.Handler, error) {
	return ops.New(ops.Options{
		Readiness: s.health,
		Metrics:   s.metrics.prom,
		Guard:     s.guard,
		Page: statuspage.Options{
			Service: func() statuspage.Service {
				if r := s.svc.Load(); r != nil {
					return r.Service
				}
				return nil
			},
			Segments: func() (statuspage.Segments, string) {
				if seg, ok := s.segs.Open(); ok {
					return seg, statuspage.SegmentsOpen
				}
				if s.segs.Off() {
					return nil, statuspage.SegmentsOff
				}
				return nil, statuspage.SegmentsOpening
			},
			Issued: s.metrics.issuedTotal,
			Server: "rest", Build: buildinfo.String(), Type: s.idType,
			MachineProvider: s.machineProvider, MachineSource: s.machineSource,
			Logger: s.log,
		},
	})
}

// issuedTotal reads the /genid counter.
func (m *metrics) issuedTotal() uint64 { return coremetrics.CounterValue(m.issued) }

// serveOps serves the operations surface's endpoints (/healthz, /readyz,
// /metrics, /status, /ui): their scopes are its own.
func (s *Server) serveOps(c echo.Context) error {
	if s.opsErr != nil {
		return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: s.opsErr}
	}
	s.ops.ServeHTTP(c.Response(), c.Request())
	return nil
}
