package coremetrics

import "github.com/prometheus/client_golang/prometheus"

// segmentCollector reads the buffers of every segment tag when /metrics
// is scraped.
type segmentCollector struct{ open func() Segments }

var (
	segmentIssuedDesc = prometheus.NewDesc("vesta_segment_ids_issued_total",
		"Segment IDs issued, by tag, since segment mode opened.",
		[]string{"tag"}, nil)
	segmentBufferedDesc = prometheus.NewDesc("vesta_segment_ids_buffered",
		"Segment IDs left in memory for a tag (current range plus the one loaded ahead): what it can issue while its database is down.",
		[]string{"tag"}, nil)
	segmentStepDesc = prometheus.NewDesc("vesta_segment_step",
		"The size of the last range loaded for a tag (its row's step before the first load).",
		[]string{"tag"}, nil)
	segmentFailingDesc = prometheus.NewDesc("vesta_segment_load_failing",
		"1 while the last load of a tag's range failed (the database is unreachable or refused it).",
		[]string{"tag"}, nil)
	segmentLastLoadDesc = prometheus.NewDesc("vesta_segment_last_load_timestamp_seconds",
		"When the last range of a tag arrived, in Unix seconds (0 before the first).",
		[]string{"tag"}, nil)
)

func (segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{segmentIssuedDesc, segmentBufferedDesc, segmentStepDesc, segmentFailingDesc, segmentLastLoadDesc} {
		ch <- d
	}
}

func (sc segmentCollector) Collect(ch chan<- prometheus.Metric) {
	if sc.open == nil {
		return
	}
	r := sc.open()
	if r == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, tag string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, tag)
	}
	for _, tag := range r.Tags() {
		st, err := r.Status(tag)
		if err != nil {
			continue // removed since Tags
		}
		ch <- prometheus.MustNewConstMetric(segmentIssuedDesc, prometheus.CounterValue, float64(st.Issued), tag)
		gauge(segmentBufferedDesc, float64(st.Current+st.Spare), tag)
		step := st.Step
		if step == 0 {
			step = st.Floor
		}
		gauge(segmentStepDesc, float64(step), tag)
		gauge(segmentFailingDesc, boolFloat(st.LastError != nil), tag)
		var last float64
		if !st.LastLoad.IsZero() {
			last = float64(st.LastLoad.UnixMilli()) / 1e3
		}
		gauge(segmentLastLoadDesc, last, tag)
	}
}
