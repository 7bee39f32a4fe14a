package restserver

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/server/ops"
	"github.com/vesta-go/vesta/internal/server/statuspage"
)

// WithMachineSource says where the machine id comes from, for the status
// page: the provider (property, ips, hostname, etcd) and where its key
// was set ("flag --machine").
func WithMachineSource(provider, source string) Option {
	return func(s *Server) { s.machineProvider, s.machineSource = provider, source }
}

// newOps builds the operations surface (internal/server/ops) over the
// runtime's readiness, the registry, and the status page over the
// runtime's service and segment mode and the /genid counter.
func (s *Server) newOps() (http.Handler, error) {
	return ops.New(ops.Options{
		Readiness: s.rt.Health,
		Metrics:   s.metrics.prom,
		Guard:     s.guard,
		Page: s.rt.Page(statuspage.Options{
			Issued: s.metrics.issuedTotal,
			Server: "rest", Build: buildinfo.String(), Type: s.idType,
			MachineProvider: s.machineProvider, MachineSource: s.machineSource,
			Logger: s.log,
		}),
	})
}

// issuedTotal reads the /genid counter.
func (m *metrics) issuedTotal() uint64 { return m.issued.Value() }

// serveOps serves the operations surface's endpoints (/healthz, /readyz,
// /metrics, /status, /ui): their scopes are its own.
func (s *Server) serveOps(c echo.Context) error {
	if s.opsErr != nil {
		return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: s.opsErr}
	}
	s.ops.ServeHTTP(c.Response(), c.Request())
	return nil
}
