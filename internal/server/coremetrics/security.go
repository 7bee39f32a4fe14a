package coremetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
)

// securityCollector reads the counters of TLS (the listener and the
// certificates) and of the guard when /metrics is scraped; it reports
// only what the server runs with.
type securityCollector struct{ s Source }

var (
	tlsHandshakesDesc = prometheus.NewDesc("vesta_tls_handshakes_total",
		"TLS handshakes completed.", nil, nil)
	tlsFailuresDesc = prometheus.NewDesc("vesta_tls_handshake_failures_total",
		"TLS handshakes that failed, by reason: not_tls (plain text to the TLS port), no_client_cert, bad_client_cert (another CA, expired), peer_refused (the client does not trust us), timeout, closed, protocol.",
		[]string{"reason"}, nil)
	tlsNotAfterDesc = prometheus.NewDesc("vesta_tls_cert_not_after_timestamp_seconds",
		"When the TLS certificate in force expires, in Unix seconds.", nil, nil)
	tlsReloadsDesc = prometheus.NewDesc("vesta_tls_cert_reloads_total",
		"Reloads of the TLS files, by result: ok (new files in force) or error (the old ones stay).", []string{"result"}, nil)
	authRefusalsDesc = prometheus.NewDesc("vesta_auth_refusals_total",
		"Requests refused by the guard, by reason: no_token, bad_scheme, malformed, oversized, unknown_token, scope, rate_limited.",
		[]string{"reason"}, nil)
	authReloadsDesc = prometheus.NewDesc("vesta_auth_file_loads_total",
		"Loads of the auth file, by result: ok (in force, the first one too) or error (the old one stays).", []string{"result"}, nil)
	authClientsDesc = prometheus.NewDesc("vesta_auth_clients",
		"Clients in the auth file in force.", nil, nil)
	clientIdsDesc = prometheus.NewDesc("vesta_client_ids_issued_total",
		"IDs (Vesta and segment) issued to each client of the auth file.", []string{"client"}, nil)
	clientRefusedDesc = prometheus.NewDesc("vesta_client_refusals_total",
		"Requests of each client of the auth file refused, by reason: scope (403) or rate_limited (429).",
		[]string{"client", "reason"}, nil)
	rateAddressesDesc = prometheus.NewDesc("vesta_rate_limit_addresses",
		"Remote addresses the quota per address (rateLimit) holds a bucket for.", nil, nil)
)

func (securityCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{tlsHandshakesDesc, tlsFailuresDesc, tlsNotAfterDesc, tlsReloadsDesc,
		authRefusalsDesc, authReloadsDesc, authClientsDesc, clientIdsDesc, clientRefusedDesc, rateAddressesDesc} {
		ch <- d
	}
}

func (sc securityCollector) Collect(ch chan<- prometheus.Metric) {
	s := sc.s
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	if s.Certs != nil {
		cs := s.Certs.Stats()
		gauge(tlsNotAfterDesc, float64(cs.NotAfter.Unix()))
		counter(tlsReloadsDesc, cs.Reloads, "ok")
		counter(tlsReloadsDesc, cs.ReloadErrors, "error")
		if st, ok := s.tlsStats(); ok {
			counter(tlsHandshakesDesc, st.Handshakes)
			for reason, n := range st.Failures {
				counter(tlsFailuresDesc, n, string(reason))
			}
		}
	}
	if s.Guard == nil {
		return
	}
	st := s.Guard.Stats()
	for reason, n := range st.Refusals {
		counter(authRefusalsDesc, n, string(reason))
	}
	if !st.RequiresToken {
		gauge(rateAddressesDesc, float64(st.Addresses))
		return
	}
	counter(authReloadsDesc, st.PolicyLoads, "ok")
	counter(authReloadsDesc, st.PolicyLoadErrors, "error")
	gauge(authClientsDesc, float64(len(st.Clients)))
	for _, c := range st.Clients {
		counter(clientIdsDesc, c.Ids, c.Name)
		counter(clientRefusedDesc, c.Denied, c.Name, "scope")
		counter(clientRefusedDesc, c.Limited, c.Name, "rate_limited")
	}
}

// tlsStats reads the listener's handshake counters, when it serves.
func (s Source) tlsStats() (tlsserve.Stats, bool) {
	if s.TLS == nil {
		return tlsserve.Stats{}, false
	}
	return s.TLS()
}
