package restserver

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/server/callmetrics"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
)

// unmatchedRoute labels requests that matched no endpoint (404), so that
// scanning clients cannot grow the label set.
const unmatchedRoute = "unmatched"

// metrics live in a private registry served at /metrics: the core's
// (internal/server/coremetrics, the same names server-rpc's admin listener
// serves) and the HTTP door's own. The service's own counters are read
// from Stats when scraped, never on the hot path. The requests and the
// IDs issued are counted in stripes (callmetrics): every request adds to
// them.
type metrics struct {
	reg    *prometheus.Registry
	issued *callmetrics.Counter
	// connsRefused counts connections closed at accept (maxConnsPerIP,
	// or maxConns with none idle); connsEvicted idle ones closed for a
	// newcomer at maxConns.
	connsRefused, connsEvicted prometheus.Counter
	routes                     map[string]*callmetrics.Series // by path as Echo routes it
	prom                       http.Handler
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), routes: map[string]*callmetrics.Series{}}
	m.issued = callmetrics.NewCounter("vesta_ids_issued_total", "IDs issued (single and batch), by ID type.",
		prometheus.Labels{"type": s.idType.String()})
	paths := endpointPaths() // labelled as documented
	requests := callmetrics.New(callmetrics.Opts{
		Calls: "vesta_http_requests_total", CallsHelp: "HTTP requests by route and status code.",
		Latency: "vesta_http_request_duration_seconds", LatencyHelp: "HTTP request latency by route.",
		Key: "route", Outcome: "code", OK: codeOK, Buckets: coremetrics.LatencyBuckets, Keys: paths,
	})
	for _, path := range paths { // keyed as Echo routes them
		m.routes[echoPath(path)] = requests.Series(path)
	}
	// Made now, not listed in Keys: its histogram shows from the start, and
	// no 200 count (nothing unmatched is answered 200).
	m.routes[unmatchedRoute] = requests.Series(unmatchedRoute)
	m.connsRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vesta_http_conns_refused_total", Help: "Connections closed at accept: their remote IP already held maxConnsPerIP, or the port held maxConns and none was idle.",
	})
	m.connsEvicted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vesta_http_conns_evicted_total", Help: "Idle connections closed to make room for a newcomer at maxConns.",
	})
	m.reg.MustRegister(m.issued, requests, m.connsRefused, m.connsEvicted)
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
