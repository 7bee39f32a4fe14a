package callmetrics_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vesta-go/vesta/internal/server/callmetrics"
)

// BenchmarkObserve measures one successful call counted with its latency
// and one ID issued, from every core at once (RunParallel): a Series and
// a Counter beside client_golang's resolved 200 counter, histogram and
// counter, which every core writes. ns/op is wall time per call over all
// goroutines; multiply by GOMAXPROCS for CPU time.
func BenchmarkObserve(b *testing.B) {
	const elapsed = 300 * time.Microsecond
	b.Run("stripes", func(b *testing.B) {
		series := callmetrics.New(opts).Series("/a")
		ids := callmetrics.NewCounter("test_ids_total", "IDs.", nil)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				series.Observe("200", elapsed)
				ids.Add(1)
			}
		})
	})
	b.Run("client_golang", func(b *testing.B) {
		ok := prometheus.NewCounterVec(prometheus.CounterOpts{Name: opts.Calls, Help: opts.CallsHelp}, []string{"route", "code"}).WithLabelValues("/a", "200")
		latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: opts.Latency, Help: opts.LatencyHelp, Buckets: opts.Buckets}, []string{"route"}).WithLabelValues("/a")
		ids := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_ids_total", Help: "IDs."})
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				latency.Observe(elapsed.Seconds())
				ok.Inc()
				ids.Add(1)
			}
		})
	})
}
