package rpcadmin

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/callmetrics"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/intf"
)

// callMetrics are the RPC calls' series, counted in stripes
// (callmetrics): every call adds to them. Each method's series is
// resolved ahead, so that a call costs no label lookup.
type callMetrics struct {
	calls   *callmetrics.Calls
	ids     *callmetrics.Counter
	methods map[string]*callmetrics.Series
}

// codeOK is the code of a call that succeeded.
const codeOK = "ok"

func newCallMetrics(t intf.IdType) *callMetrics {
	m := &callMetrics{
		calls: callmetrics.New(callmetrics.Opts{
			Calls:     "vesta_rpc_calls_total",
			CallsHelp: "RPC calls answered, by method and code: ok, or the error code of the reply (rpcapi.Code.Name: invalid_argument, unavailable, ...).",
			Latency:   "vesta_rpc_call_duration_seconds", LatencyHelp: "RPC call latency on the server (from the call read to its reply made), by method.",
			Key: "method", Outcome: "code", OK: codeOK, Buckets: coremetrics.LatencyBuckets, Keys: rpcapi.Methods,
		}),
		ids:     callmetrics.NewCounter("vesta_ids_issued_total", "IDs issued (single and batch), by ID type.", prometheus.Labels{"type": t.String()}),
		methods: map[string]*callmetrics.Series{},
	}
	for _, name := range rpcapi.Methods {
		m.methods[name] = m.calls.Series(name)
	}
	return m
}

func (m *callMetrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.calls, m.ids} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("rpcadmin: %w", err)
		}
	}
	return nil
}

// ObserveCall counts one call (rpcapi.CallObserver): by method and code,
// its latency, and the Vesta IDs it issued.
func (a *Admin) ObserveCall(method string, ids int, err *rpcapi.Error, elapsed time.Duration) {
	m := a.calls
	series, ok := m.methods[method]
	if !ok { // a method this version does not list: count it all the same
		series = m.calls.Series(method)
	}
	if err != nil {
		series.Observe(err.Code.Name(), elapsed)
		return
	}
	series.Observe(codeOK, elapsed)
	if ids > 0 && (method == rpcapi.MethodGenId || method == rpcapi.MethodGenIds) {
		m.ids.Add(uint64(ids)) // segment IDs are counted by tag by segment mode
	}
}

// connCollector reads the RPC server's connection counters when scraped.
type connCollector struct{ a *Admin }

var (
	connsOpenDesc = prometheus.NewDesc("vesta_rpc_connections_open",
		"RPC connections served now.", nil, nil)
	connsIdleDesc = prometheus.NewDesc("vesta_rpc_connections_idle",
		"Open RPC connections waiting for a call (the ones a newcomer over maxConns may evict).", nil, nil)
	connsAcceptedDesc = prometheus.NewDesc("vesta_rpc_connections_accepted_total",
		"RPC connections accepted.", nil, nil)
	connsRefusedDesc = prometheus.NewDesc("vesta_rpc_connections_refused_total",
		"RPC connections closed at accept, by reason: per_ip (maxConnsPerIP), full (max-conns, none idle to evict), closing (shutting down).",
		[]string{"reason"}, nil)
	connsClosedDesc = prometheus.NewDesc("vesta_rpc_connections_closed_total",
		"RPC connections closed by the server, by reason: evicted (room for a newcomer), first_byte_timeout, idle_timeout, message_timeout, write_timeout, too_big (a message over max-message-bytes), bad_types (gob type definitions over the per-connection bound, or an interface type).",
		[]string{"reason"}, nil)
)

func (connCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{connsOpenDesc, connsIdleDesc, connsAcceptedDesc, connsRefusedDesc, connsClosedDesc} {
		ch <- d
	}
}

func (cc connCollector) Collect(ch chan<- prometheus.Metric) {
	srv := cc.a.srv.Load()
	if srv == nil {
		return
	}
	st := srv.Stats()
	gauge := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(connsOpenDesc, st.Open)
	gauge(connsIdleDesc, st.Idle)
	counter(connsAcceptedDesc, st.Accepted)
	counter(connsRefusedDesc, st.RefusedPerIP, "per_ip")
	counter(connsRefusedDesc, st.RefusedFull, "full")
	counter(connsRefusedDesc, st.Refused-min(st.Refused, st.RefusedPerIP+st.RefusedFull), "closing")
	counter(connsClosedDesc, st.Evicted, "evicted")
	counter(connsClosedDesc, st.FirstByteTimeouts, "first_byte_timeout")
	counter(connsClosedDesc, st.IdleTimeouts, "idle_timeout")
	counter(connsClosedDesc, st.MessageTimeouts, "message_timeout")
	counter(connsClosedDesc, st.WriteTimeouts, "write_timeout")
	counter(connsClosedDesc, st.TooBig, "too_big")
	counter(connsClosedDesc, st.BadTypes, "bad_types")
}
