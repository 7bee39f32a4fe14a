package restserver_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metricValue returns the value of the sample line that starts with
// series (name and labels, as exposed), or fails.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	require.Failf(t, "series not found", "%s in\n%s", series, body)
	return 0
}

func TestMetrics(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "78"))
	for range 3 {
		require.Equal(t, 200, get(t, ts.URL+"/genid").status)
	}
	require.Equal(t, 200, get(t, ts.URL+"/genid?count=10").status)
	require.Equal(t, 400, get(t, ts.URL+"/genid?count=0").status)
	require.Equal(t, 400, get(t, ts.URL+"/makeid?time=1").status)
	require.Equal(t, 404, get(t, ts.URL+"/no/such/path").status)
	require.Equal(t, 200, get(t, ts.URL+"/expid?id=1").status)

	r := get(t, ts.URL+"/metrics")
	require.Equal(t, 200, r.status)
	assert.True(t, strings.HasPrefix(r.ctype, "text/plain"), r.ctype)
	m := r.body

	assert.Equal(t, 13.0, metricValue(t, m, `vesta_ids_issued_total{type="max-peak"}`))
	assert.Equal(t, 4.0, metricValue(t, m, `vesta_http_requests_total{code="200",route="/genid"}`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_http_requests_total{code="400",route="/genid"}`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_http_requests_total{code="400",route="/makeid"}`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_http_requests_total{code="200",route="/expid"}`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_http_requests_total{code="404",route="unmatched"}`))
	assert.Equal(t, 5.0, metricValue(t, m, `vesta_http_request_duration_seconds_count{route="/genid"}`))
	assert.Equal(t, 0.0, metricValue(t, m, `vesta_sequence_exhaustion_waits_total`))
	assert.Equal(t, 0.0, metricValue(t, m, `vesta_clock_back_events_total`))
	assert.Greater(t, metricValue(t, m, `vesta_high_water_mark_timestamp_seconds`), 1.7e9, "a data dir is in use")
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_ready`))
	assert.Equal(t, 78.0, metricValue(t, m, `vesta_machine_id`))
	assert.Equal(t, 1.0, metricValue(t, m, `vesta_machine_lease_held`), "no lease: always held")
	assert.Equal(t, 0.0, metricValue(t, m, `vesta_machine_lease_fences_total`))
	assert.Contains(t, m, "\ngo_goroutines ")
	assert.Contains(t, m, "\nprocess_")
	assert.NotContains(t, m, "/no/such/path", "unmatched paths do not become labels")
	assert.NotContains(t, m, `vesta_http_requests_total{code="200",route="unmatched"}`, "nothing unmatched is answered 200")
	assert.Contains(t, m, `vesta_http_request_duration_seconds_count{route="unmatched"} 0`, "its histogram shows from the start")
}
