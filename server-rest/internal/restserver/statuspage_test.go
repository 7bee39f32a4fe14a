package restserver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/statuspage"
)

// status GETs /status (checked against docs/openapi.yaml by get).
func status(t *testing.T, base string) statuspage.Status {
	t.Helper()
	r := get(t, base+"/status")
	require.Equal(t, 200, r.status, r.body)
	var st statuspage.Status
	require.NoError(t, jsonUnmarshal(r.body, &st))
	return st
}

// /status follows /genid and /segment/{tag}: the issued counter, the
// segment buffer's position, the machine id and where it was set.
func TestStatusFollowsTheServer(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "77", "--segment-tags", "order", "--type", "min-granularity"))
	st := status(t, ts.URL)
	assert.Equal(t, "ready", st.State)
	require.NotNil(t, st.Machine.Id)
	assert.Equal(t, int64(77), *st.Machine.Id)
	assert.Equal(t, "property", st.Machine.Provider)
	assert.Equal(t, "flag --machine", st.Machine.Source)
	assert.Nil(t, st.Machine.Lease, "no lease")
	assert.Equal(t, "min-granularity", st.Layout.Type)
	assert.Equal(t, int64(1_024_000), st.Layout.CapacityPerSecond)
	assert.Zero(t, st.Ids.Issued)

	require.Equal(t, 200, get(t, ts.URL+"/genid?count=100").status)
	require.Equal(t, 200, get(t, ts.URL+"/genid").status)
	require.Equal(t, 200, get(t, ts.URL+"/segment/order?count=3").status)
	st = status(t, ts.URL)
	assert.Equal(t, uint64(101), st.Ids.Issued)
	assert.Greater(t, st.Clock.HighWaterAheadMillis, int64(0), "the mark runs ahead of the clock")
	require.Len(t, st.Segments.Tags, 1)
	order := st.Segments.Tags[0]
	assert.Equal(t, "order", order.Tag)
	require.NotNil(t, order.Current)
	assert.Equal(t, statuspage.Buffer{Start: 1, Position: 4, Max: 1000, Step: 1000, Left: 997}, *order.Current)
	assert.True(t, order.DBReachable)
	assert.NotEmpty(t, order.LastLoad)
}
