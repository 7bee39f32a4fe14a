package callmetrics

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Opts names the two families of a door's calls and what a call is keyed
// by.
type Opts struct {
	Calls, CallsHelp     string    // the counter family, e.g. vesta_http_requests_total
	Latency, LatencyHelp string    // the histogram family, in seconds
	Key, Outcome         string    // the labels: what a call is (route, method), how it ended (code)
	OK                   string    // the outcome of a success, the one counted in stripes ("200", "ok")
	Buckets              []float64 // the histogram's upper bounds, increasing
	Keys                 []string  // the keys exported from the start (at 0); others are added on first use
}

// Calls counts calls by key and outcome, and their latency by key. It is
// a prometheus.Collector of the two families.
type Calls struct {
	o                      Opts
	callsDesc, latencyDesc *prometheus.Desc
	mu                     sync.Mutex
	series                 atomic.Pointer[map[string]*Series] // copied on write: read without a lock
	order                  []*Series                          // in the order they were made, under mu
}

// Series is one key's counts.
type Series struct {
	c       *Calls
	key     string
	ahead   bool     // one of Opts.Keys: its OK count is exported at 0 too
	stripes *stripes // words: ok, sum of nanoseconds, then one count per bucket and one above the last
	others  sync.Map // outcome -> *atomic.Uint64, the outcomes other than OK
}

// The words of a series' stripe.
const (
	wordOK = iota
	wordSumNanos
	wordBuckets
)

// New makes Calls with the series of o.Keys.
func New(o Opts) *Calls {
	o.Buckets = slices.Clone(o.Buckets)
	c := &Calls{o: o,
		callsDesc:   prometheus.NewDesc(o.Calls, o.CallsHelp, []string{o.Key, o.Outcome}, nil),
		latencyDesc: prometheus.NewDesc(o.Latency, o.LatencyHelp, []string{o.Key}, nil),
	}
	c.series.Store(&map[string]*Series{})
	for _, k := range o.Keys {
		c.Series(k).ahead = true // before any call: no one reads it yet
	}
	return c
}

// Series is key's series, made on first use.
func (c *Calls) Series(key string) *Series {
	if s, ok := (*c.series.Load())[key]; ok {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := *c.series.Load()
	if s, ok := m[key]; ok {
		return s
	}
	s := &Series{c: c, key: key, stripes: newStripes(wordBuckets + len(c.o.Buckets) + 1)}
	next := make(map[string]*Series, len(m)+1)
	for k, v := range m {
		next[k] = v
	}
	next[key] = s
	c.series.Store(&next)
	c.order = append(c.order, s)
	return s
}

// Observe counts one call that ended with outcome and took elapsed.
func (s *Series) Observe(outcome string, elapsed time.Duration) {
	bucket := wordBuckets + len(s.c.o.Buckets)
	secs := elapsed.Seconds()
	for i, upper := range s.c.o.Buckets { // le: the first bound at or above
		if secs <= upper {
			bucket = wordBuckets + i
			break
		}
	}
	st := s.stripes.get()
	st.w[bucket].Add(1)
	st.w[wordSumNanos].Add(uint64(elapsed)) // two's complement: a negative elapsed subtracts
	if outcome == s.c.o.OK {
		st.w[wordOK].Add(1)
	}
	s.stripes.put(st)
	if outcome != s.c.o.OK {
		s.Count(outcome)
	}
}

// Count counts one call that ended with outcome, without its latency.
func (s *Series) Count(outcome string) {
	if outcome == s.c.o.OK {
		st := s.stripes.get()
		st.w[wordOK].Add(1)
		s.stripes.put(st)
		return
	}
	n, ok := s.others.Load(outcome)
	if !ok {
		n, _ = s.others.LoadOrStore(outcome, new(atomic.Uint64))
	}
	n.(*atomic.Uint64).Add(1)
}

// Describe sends the two families' descriptions.
func (c *Calls) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.callsDesc
	ch <- c.latencyDesc
}

// Collect sends each series' counts and histogram, summed over its
// stripes.
func (c *Calls) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	order := slices.Clone(c.order)
	c.mu.Unlock()
	for _, s := range order {
		if ok := s.stripes.sum(wordOK); ok > 0 || s.ahead {
			ch <- prometheus.MustNewConstMetric(c.callsDesc, prometheus.CounterValue, float64(ok), s.key, c.o.OK)
		}
		s.others.Range(func(outcome, n any) bool {
			ch <- prometheus.MustNewConstMetric(c.callsDesc, prometheus.CounterValue, float64(n.(*atomic.Uint64).Load()), s.key, outcome.(string))
			return true
		})
		var count uint64
		cumulative := make(map[float64]uint64, len(c.o.Buckets))
		for i, upper := range c.o.Buckets {
			count += s.stripes.sum(wordBuckets + i)
			cumulative[upper] = count
		}
		count += s.stripes.sum(wordBuckets + len(c.o.Buckets))
		sum := time.Duration(int64(s.stripes.sum(wordSumNanos))).Seconds()
		ch <- prometheus.MustNewConstHistogram(c.latencyDesc, count, sum, cumulative, s.key)
	}
}
