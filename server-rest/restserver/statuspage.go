package restserver

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/coremetrics"
	"github.com/vesta-go/vesta/internal/statuspage"
)

// WithMachineSource says where the machine id comes from, for the status
// page: the provider (property, ips, hostname, etcd) and where its key
// was set ("flag --machine").
func WithMachineSource(provider, source string) Option {
	return func(s *Server) { s.machineProvider, s.machineSource = provider, source }
}

// newStatusPage builds the page of /status and /ui over the server's
// state: the service and segment mode as published, the /genid counter
// and /readyz's readiness.
func (s *Server) newStatusPage() (status, ui http.Handler, err error) {
	page, err := statuspage.New(statuspage.Options{
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
		State: func() (string, string) {
			state, why := s.readiness()
			if why != nil {
				return state, why.Msg
			}
			return state, ""
		},
		Server: "rest", Build: buildinfo.String(), Type: s.idType,
		MachineProvider: s.machineProvider, MachineSource: s.machineSource,
		Logger: s.log,
	})
	if err != nil {
		return nil, nil, err
	}
	return page.StatusHandler(), page.UIHandler(), nil
}

// issuedTotal reads the /genid counter.
func (m *metrics) issuedTotal() uint64 { return coremetrics.CounterValue(m.issued) }

// status serves /status (scope metrics with an auth file, as /metrics).
func (s *Server) status(c echo.Context) error {
	if s.statusErr != nil {
		return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: s.statusErr}
	}
	s.statusPage.ServeHTTP(c.Response(), c.Request())
	return nil
}

// ui serves /ui, the HTML page: it holds no data, so it needs no token;
// the page sends the one the operator types in to /status.
func (s *Server) ui(c echo.Context) error {
	if s.statusErr != nil {
		return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: s.statusErr}
	}
	s.uiPage.ServeHTTP(c.Response(), c.Request())
	return nil
}
