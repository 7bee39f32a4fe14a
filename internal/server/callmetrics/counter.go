package callmetrics

import "github.com/prometheus/client_golang/prometheus"

// Counter is a counter without labels, or with constant ones, whose count
// is striped like a series': the IDs a door issues, added by every call.
// It is a prometheus.Collector.
type Counter struct {
	desc    *prometheus.Desc
	stripes *stripes
}

// NewCounter makes a Counter of the family name with the constant labels.
func NewCounter(name, help string, labels prometheus.Labels) *Counter {
	return &Counter{desc: prometheus.NewDesc(name, help, nil, labels), stripes: newStripes(1)}
}

// Add adds n.
func (c *Counter) Add(n uint64) {
	st := c.stripes.get()
	st.w[0].Add(n)
	c.stripes.put(st)
}

// Value is the count.
func (c *Counter) Value() uint64 { return c.stripes.sum(0) }

// Describe sends the family's description.
func (c *Counter) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends the count.
func (c *Counter) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.Value()))
}
