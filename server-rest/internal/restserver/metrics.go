package restserver

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
)

// unmatchedRoute labels requests that matched no endpoint (404), so that
// scanning clients cannot grow the label set.
const unmatchedRoute = "unmatched"

// metrics live in a private registry served at /metrics: the core's
// (internal/server/coremetrics, the same names server-rpc's admin listener
// serves) and the HTTP door's own. The service's own counters are read
// from Stats when scraped, never on the hot path.
type metrics struct {
	reg    *prometheus.Registry
	issued prometheus.Counter
	// connsRefused counts connections closed at accept (maxConnsPerIP,
	// or maxConns with none idle); connsEvicted idle ones closed for a
	// newcomer at maxConns.
	connsRefused, connsEvicted prometheus.Counter
	routes                     map[string]*routeMetrics
	prom                       http.Handler
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), routes: map[string]*routeMetrics{}}
	issued := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_ids_issued_total", Help: "IDs issued (single and batch), by ID type.",
	}, []string{"type"})
	m.issued = issued.WithLabelValues(s.idType.String())
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vesta_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: coremetrics.LatencyBuckets,
	}, []string{"route"})
	for _, path := range endpointPaths() { // keyed as Echo routes them, labelled as documented
		m.routes[echoPath(path)] = &routeMetrics{name: path, latency: latency.WithLabelValues(path),
			ok: requests.WithLabelValues(path, "200"), requests: requests}
	}
	m.routes[unmatchedRoute] = &routeMetrics{name: unmatchedRoute, latency: latency.WithLabelValues(unmatchedRoute), requests: requests}
	m.connsRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vesta_http_conns_refused_total", Help: "Connections closed at accept: their remote IP already held maxConnsPerIP, or the port held maxConns and none was idle.",
	})
	m.connsEvicted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vesta_http_conns_evicted_total", Help: "Idle connections closed to make room for a newcomer at maxConns.",
	})
	m.reg.MustRegister(issued, requests, latency, m.connsRefused, m.connsEvicted)
	err := coremetrics.Register(m.reg, s.rt.Metrics(coremetrics.Source{
		Type:  s.idType,
		Certs: s.certs,
		TLS: func() (tlsserve.Stats, bool) {
			if l := s.tlsLn.Load(); l != nil {
				return l.Stats(), true
			}
			return tlsserve.Stats{}, false
		},
		Guard: s.guard,
	}))
	if err != nil { // New validated the type: cannot happen
		panic(err)
	}
	m.prom = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}
