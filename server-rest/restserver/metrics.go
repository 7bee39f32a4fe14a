package restserver

import (
	"net/http"
	"sync"

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
	// connsRefused counts connections closed at accept (maxConnsPerIP).
	connsRefused prometheus.Counter
	routes       map[string]*routeMetrics
	prom         http.Handler

	// segmentIssuedVec counts segment IDs by tag. Only tags that issued
	// IDs, so tags of the database, become labels; their counters are
	// cached so that a request costs no label hashing.
	segmentIssuedVec *prometheus.CounterVec
	segmentIssuedBy  sync.Map // tag → prometheus.Counter
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), routes: map[string]*routeMetrics{}}
	issued := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_ids_issued_total", Help: "IDs issued by /genid (single and batch), by ID type.",
	}, []string{"type"})
	m.issued = issued.WithLabelValues(s.idType.String())
	m.segmentIssuedVec = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_segment_ids_issued_total", Help: "Segment IDs issued by /segment/{tag} (single and batch), by tag.",
	}, []string{"tag"})
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vesta_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vesta_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 4, 9), // 50µs .. 3.3s
	}, []string{"route"})
	for _, path := range endpointPaths() { // keyed as Echo routes them, labelled as documented
		m.routes[echoPath(path)] = &routeMetrics{name: path, latency: latency.WithLabelValues(path),
			ok: requests.WithLabelValues(path, "200"), requests: requests}
	}
	m.routes[unmatchedRoute] = &routeMetrics{name: unmatchedRoute, latency: latency.WithLabelValues(unmatchedRoute), requests: requests}
	m.connsRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vesta_http_conns_refused_total", Help: "Connections closed at accept: their remote IP already held maxConnsPerIP.",
	})
	m.reg.MustRegister(issued, requests, latency, m.segmentIssuedVec, segmentCollector{s}, securityCollector{s}, m.connsRefused,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_ready", Help: "1 when /readyz says ready: the ID service is up, its machine id held, and the server not shutting down.",
		}, func() float64 {
			status, _ := s.readiness()
			return boolFloat(status == statusReady)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_build_info", Help: "Always 1; the labels say what runs.",
			ConstLabels: prometheus.Labels{"version": buildinfo.String(), "type": s.idType.String()},
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
	{"vesta_machine_id", "The machine id in use (0 until the service has started: see vesta_ready).", false,
		func(st service.Stats) float64 { return float64(st.Machine) }},
	{"vesta_machine_lease_held", "1 while a machine id lease is held (without a lease: 1 once the service has started).", false,
		func(st service.Stats) float64 { return boolFloat(st.LeaseHeld) }},
	{"vesta_time_ahead_seconds", "How far the last time unit handed out begins after the clock (a restart's first unit, or borrowing with maxBorrow); 0 normally.", false,
		func(st service.Stats) float64 { return float64(st.AheadMillis) / 1e3 }},
	{"vesta_machine_lease_mark_refusals_total", "Machine ids claimed and given back because their high-water mark was too far ahead of the clock.", true,
		func(st service.Stats) float64 { return float64(st.Lease.MarkRefusals) }},
	{"vesta_machine_lease_claims_total", "Machine ids claimed from the coordinator (not counting resumes).", true,
		func(st service.Stats) float64 { return float64(st.Lease.Claims) }},
	{"vesta_machine_lease_claim_txns_total", "Claim transactions sent to the coordinator, those that lost a race to another node included.", true,
		func(st service.Stats) float64 { return float64(st.Lease.ClaimTxns) }},
	{"vesta_machine_lease_resumes_total", "Holds resumed after a restart from the lease state kept in the data dir (the same id, no new claim).", true,
		func(st service.Stats) float64 { return float64(st.Lease.Resumes) }},
	{"vesta_etcd_uncompacted_revisions", "Revisions etcd keeps uncompacted, as seen by this node (a lower bound; 0 when unknown). Growing without bound means no auto-compaction: etcd's quota will fill.", false,
		func(st service.Stats) float64 { return float64(st.Lease.UncompactedRevisions) }},
	{"vesta_machine_lease_coordinator_nospace", "1 while the coordinator (etcd) refuses writes because its quota is full (NOSPACE alarm): the node issues up to its stored mark, then stops.", false,
		func(st service.Stats) float64 { return boolFloat(st.Lease.NoSpace) }},
	{"vesta_machine_lease_fences_total", "Times a held machine id lease was lost; IDs stop until it is held again.", true,
		func(st service.Stats) float64 { return float64(st.Fences) }},
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// segmentIssued returns the counter of tag's segment IDs.
func (m *metrics) segmentIssued(tag string) prometheus.Counter {
	if c, ok := m.segmentIssuedBy.Load(tag); ok {
		return c.(prometheus.Counter)
	}
	c, _ := m.segmentIssuedBy.LoadOrStore(tag, m.segmentIssuedVec.WithLabelValues(tag))
	return c.(prometheus.Counter)
}

// segmentCollector reads the buffers of every segment tag when /metrics
// is scraped.
type segmentCollector struct{ s *Server }

var (
	segmentBufferedDesc = prometheus.NewDesc("vesta_segment_ids_buffered",
		"Segment IDs left in memory for a tag (current range plus the one loaded ahead): what it can issue while its database is down.",
		[]string{"tag"}, nil)
	segmentFailingDesc = prometheus.NewDesc("vesta_segment_load_failing",
		"1 while the last load of a tag's range failed (the database is unreachable or refused it).",
		[]string{"tag"}, nil)
)

func (segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- segmentBufferedDesc
	ch <- segmentFailingDesc
}

func (sc segmentCollector) Collect(ch chan<- prometheus.Metric) {
	r := sc.s.seg.Load()
	if r == nil {
		return
	}
	for _, tag := range r.Tags() {
		st, err := r.Status(tag)
		if err != nil {
			continue // removed since Tags
		}
		ch <- prometheus.MustNewConstMetric(segmentBufferedDesc, prometheus.GaugeValue, float64(st.Current+st.Spare), tag)
		ch <- prometheus.MustNewConstMetric(segmentFailingDesc, prometheus.GaugeValue, boolFloat(st.LastError != nil), tag)
	}
}

// serveMetrics serves /metrics in the Prometheus formats.
func (s *Server) serveMetrics(c echo.Context) error {
	s.metrics.prom.ServeHTTP(c.Response(), c.Request())
	return nil
}
