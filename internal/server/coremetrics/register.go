package coremetrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Segments is what the metrics read of segment mode; *segment.Generator
// implements it.
type Segments interface {
	Tags() []string
	Status(tag string) (segbuf.Status, error)
}

// Source is what the metrics read when scraped, never on a call's path.
type Source struct {
	// Type is the service's ID type (labels, the capacity).
	Type intf.IdType
	// Stats reads the ID service (required).
	Stats StatsFunc
	// Ready says whether /readyz says ready (required).
	Ready func() bool
	// Segments returns segment mode, nil while it is off or not open; nil
	// Segments means never.
	Segments func() Segments
	// Certs is the TLS certificate in force, nil without TLS; TLS reads
	// the listener's handshake counters, ok false before it serves.
	Certs *tlsserve.Certs
	TLS   func() (st tlsserve.Stats, ok bool)
	// Guard is the server's guard, nil without one.
	Guard *access.Guard
}

// Register adds the core's metrics of src to reg, with the Go runtime's
// and the process's.
func Register(reg prometheus.Registerer, src Source) error {
	if src.Stats == nil || src.Ready == nil {
		return fmt.Errorf("coremetrics: Source.Stats and Source.Ready are required")
	}
	layout, err := src.Type.Layout()
	if err != nil {
		return fmt.Errorf("coremetrics: %w", err)
	}
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_ready", Help: "1 when /readyz says ready: the ID service is up, its machine id held, and the server not shutting down.",
		}, func() float64 { return boolFloat(src.Ready()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_build_info", Help: "Always 1; the labels say what runs.",
			ConstLabels: prometheus.Labels{"version": buildinfo.String(), "type": src.Type.String()},
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vesta_ids_capacity_per_second",
			Help: "The most IDs one node can issue per second: sequence numbers per time unit × units per second (the bit budget; rate(vesta_ids_issued_total) over it is the share in use).",
		}, func() float64 { return float64(layout.Seq.Max()+1) * float64(time.Second/layout.Unit) }),
		segmentCollector{src.Segments},
		securityCollector{src},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	for _, st := range statMetrics {
		f := st.value
		read := func() float64 {
			if s, ok := src.Stats(); ok {
				return f(s)
			}
			return 0
		}
		if st.counter {
			cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: st.name, Help: st.help}, read))
		} else {
			cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: st.name, Help: st.help}, read))
		}
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("coremetrics: %w", err)
		}
	}
	return nil
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
	{"vesta_high_water_mark_write_failures_total", "Failed stores of a time high-water mark, in the data dir or with the machine id lease.", true,
		func(st service.Stats) float64 { return float64(st.MarkWriteFailures) }},
	{"vesta_high_water_mark_failing", "1 while the last store of a high-water mark (data dir or lease) failed: IDs stop once the clock reaches the mark stored last.", false,
		func(st service.Stats) float64 { return boolFloat(st.MarkFailing) }},
	{"vesta_machine_lease_mark_timestamp_seconds", "The high-water mark stored with the machine id lease, in Unix seconds (0 without a lease).", false,
		func(st service.Stats) float64 { return float64(st.LeaseMarkMillis) / 1e3 }},
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

// LatencyBuckets are the buckets of both servers' latency histograms
// (HTTP routes, RPC methods): 50µs .. 3.3s.
var LatencyBuckets = prometheus.ExponentialBuckets(50e-6, 4, 9)
