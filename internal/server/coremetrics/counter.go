package coremetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// CounterValue reads c (a float64 inside: exact up to 2^53), for a status
// page that shows what /metrics counts; 0 if it cannot be read.
func CounterValue(c prometheus.Counter) uint64 {
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		return 0
	}
	return uint64(d.GetCounter().GetValue())
}
