package callmetrics_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/callmetrics"
)

var opts = callmetrics.Opts{
	Calls: "test_calls_total", CallsHelp: "Calls.",
	Latency: "test_call_seconds", LatencyHelp: "Latency.",
	Key: "route", Outcome: "code", OK: "200",
	Buckets: prometheus.ExponentialBuckets(50e-6, 4, 9),
	Keys:    []string{"/a", "/b"},
}

// observation is one call as both recorders see it.
type observation struct {
	key, outcome string
	elapsed      time.Duration
	timed        bool // Observe, else Count
}

// observations are calls at every bucket bound, either side of it, below
// 0 and past the last, successful or not, on the keys made ahead and on
// one made on first use.
func observations() []observation {
	var obs []observation
	keys := []string{"/a", "/b", "/later"}
	outcomes := []string{"200", "404", "503"}
	for i, upper := range opts.Buckets {
		b := time.Duration(upper * float64(time.Second))
		for j, d := range []time.Duration{b - 1, b, b + 1, -time.Millisecond, 100 * time.Second} {
			n := i*5 + j
			obs = append(obs, observation{keys[n%3], outcomes[n%len(outcomes)], d, n%7 != 0})
		}
	}
	return obs
}

// exposition is what reg serves.
func exposition(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var b bytes.Buffer
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&b, mf)
		require.NoError(t, err)
	}
	return b.String()
}

// TestCallsServeWhatClientGolangServes: the same calls, observed from
// many goroutines at once, give the exposition a CounterVec and a
// HistogramVec give.
func TestCallsServeWhatClientGolangServes(t *testing.T) {
	calls := callmetrics.New(opts)
	counts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: opts.Calls, Help: opts.CallsHelp}, []string{"route", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: opts.Latency, Help: opts.LatencyHelp, Buckets: opts.Buckets}, []string{"route"})
	for _, k := range opts.Keys {
		counts.WithLabelValues(k, "200")
		latency.WithLabelValues(k)
	}
	const rounds = 50
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for r := range rounds {
				for _, o := range observations() {
					s := calls.Series(o.key)
					if o.timed {
						s.Observe(o.outcome, o.elapsed)
					} else {
						s.Count(o.outcome)
					}
				}
				if g == 0 && r%10 == 0 {
					runtime.GC() // the pool drops its stripes: no count may go with them
				}
			}
		})
	}
	for range 8 * rounds {
		for _, o := range observations() {
			counts.WithLabelValues(o.key, o.outcome).Inc()
			if o.timed {
				latency.WithLabelValues(o.key).Observe(o.elapsed.Seconds())
			} else {
				latency.WithLabelValues(o.key) // the series exists, as Series makes it
			}
		}
	}
	wg.Wait()
	got, want := prometheus.NewRegistry(), prometheus.NewRegistry()
	got.MustRegister(calls)
	want.MustRegister(counts, latency)
	wantText, wantSums := splitSums(exposition(t, want))
	gotText, gotSums := splitSums(exposition(t, got))
	require.Equal(t, wantText, gotText)
	require.Len(t, gotSums, len(wantSums))
	for i := range wantSums { // client_golang adds floats; the stripes add whole nanoseconds
		require.InEpsilon(t, wantSums[i], gotSums[i], 1e-9)
	}
}

// splitSums takes the histograms' _sum lines out of an exposition.
func splitSums(text string) (string, []float64) {
	var rest []string
	var sums []float64
	for _, line := range strings.Split(text, "\n") {
		name, value, _ := strings.Cut(line, " ")
		if !strings.Contains(name, "_sum{") {
			rest = append(rest, line)
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			panic(err)
		}
		sums = append(sums, v)
	}
	return strings.Join(rest, "\n"), sums
}

// TestCounterCountsEveryAdd: adds from many goroutines, across garbage
// collections, all count.
func TestCounterCountsEveryAdd(t *testing.T) {
	c := callmetrics.NewCounter("test_ids_total", "IDs.", prometheus.Labels{"type": "max-peak"})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10000 {
				c.Add(uint64(g + 1))
				if g == 0 && i%2000 == 0 {
					runtime.GC()
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, uint64(10000*(1+2+3+4+5+6+7+8)), c.Value())
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	require.Contains(t, exposition(t, reg), `test_ids_total{type="max-peak"} 360000`)
}

func ExampleCalls() {
	calls := callmetrics.New(callmetrics.Opts{
		Calls: "demo_requests_total", CallsHelp: "Requests by route and code.",
		Latency: "demo_request_seconds", LatencyHelp: "Request latency by route.",
		Key: "route", Outcome: "code", OK: "200",
		Buckets: []float64{0.001, 0.01}, Keys: []string{"/genid"},
	})
	genid := calls.Series("/genid") // resolve once; each call then costs no lookup
	genid.Observe("200", 300*time.Microsecond)
	genid.Observe("429", 2*time.Millisecond)
	calls.Series("unmatched").Count("404")

	reg := prometheus.NewRegistry()
	reg.MustRegister(calls)
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				fmt.Println(mf.GetName(), labels["route"], "count", h.GetSampleCount())
			} else {
				fmt.Println(mf.GetName(), labels["route"], labels["code"], m.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// demo_request_seconds /genid count 2
	// demo_request_seconds unmatched count 0
	// demo_requests_total /genid 200 1
	// demo_requests_total unmatched 404 1
	// demo_requests_total /genid 429 1
}
