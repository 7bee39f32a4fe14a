package restserver

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/service"
)

// unmatchedRoute labels requests that matched no endpoint (404), so that
// scanning clients cannot grow the label set.
const unmatchedRoute = "unmatched"

// metrics live in a private registry served at /metrics. The service's own
// counters are read from Stats when scraped, never on the hot path.
type metrics struct {
	reg    *prometheus.Registry
	issued prometheus.Counter
	routes map[string]*routeMetrics
	prom   http.Handler
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), routes: map[string]*routeMetrics{}}
	issued := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_ids_issued_total", Help: "IDs issued by /genid (single and batch), by ID type.",
	}, []string{"type"})
	m.issued = issued.WithLabelValues(s.cfg.Service.Type.String())
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vesta_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 4, 9), // 50µs .. 3.3s
	}, []string{"route"})
	for _, route := range endpointPaths() {
		m.routes[route] = &routeMetrics{name: route, latency: latency.WithLabelValues(route),
			ok: requests.WithLabelValues(route, "200"), requests: requests}
	}
	m.routes[unmatchedRoute] = &routeMetrics{name: unmatchedRoute, latency: latency.WithLabelValues(unmatchedRoute), requests: requests}
	m.reg.MustRegister(issued, requests, latency,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_ready", Help: "1 when the ID service is up and the server not shutting down.",
		}, func() float64 {
			if s.svc.Load() != nil && !s.draining.Load() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_build_info", Help: "Always 1; the labels say what runs.",
			ConstLabels: prometheus.Labels{"version": buildinfo.String(), "type": s.cfg.Service.Type.String()},
		}, func() float64 { return 1 }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	for _, st := range statMetrics {
		f := st.value
		read := func() float64 {
			if r := s.svc.Load(); r != nil {
				return f(r.Stats())
			}
			return 0
		}
		if st.counter {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: st.name, Help: st.help}, read))
		} else {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: st.name, Help: st.help}, read))
		}
	}
	m.prom = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// statMetrics are read from service.Stats when /metrics is scraped (0
// while the service starts).
var statMetrics = []struct {
	name, help string
	counter    bool
	value      func(service.Stats) float64
}{
	{"vesta_sequence_exhaustion_waits_total", "Times a time unit's sequence ran out and a caller waited for the next unit.", true,
		func(st service.Stats) float64 { return float64(st.ExhaustionWaits) }},
	{"vesta_clock_back_events_total", "Times the wall clock was seen to step back by more than a second (IDs keep the monotonic time).", true,
		func(st service.Stats) float64 { return float64(st.ClockBackEvents) }},
	{"vesta_high_water_mark_timestamp_seconds", "The stored time high-water mark, in Unix seconds (0 without a data dir).", false,
		func(st service.Stats) float64 { return float64(st.HighWaterMillis) / 1e3 }},
	{"vesta_machine_id", "The machine id in use.", false,
		func(st service.Stats) float64 { return float64(st.Machine) }},
	{"vesta_machine_lease_held", "1 while a machine id lease is held (always 1 without a lease).", false,
		func(st service.Stats) float64 { return boolFloat(st.LeaseHeld) }},
	{"vesta_machine_lease_fences_total", "Times a held machine id lease was lost; IDs stop until it is held again.", true,
		func(st service.Stats) float64 { return float64(st.Fences) }},
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// serveMetrics serves /metrics in the Prometheus formats.
func (s *Server) serveMetrics(c echo.Context) error {
	s.metrics.prom.ServeHTTP(c.Response(), c.Request())
	return nil
}
