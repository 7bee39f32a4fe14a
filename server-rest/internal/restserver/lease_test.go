package restserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
)

// fakeLease is a machineid.Lease driven by the test: Run hands the
// holder to the test and waits for the service to close.
type fakeLease struct{ holders chan machineid.Holder }

func (l *fakeLease) Run(ctx context.Context, h machineid.Holder) error {
	l.holders <- h
	<-ctx.Done()
	return ctx.Err()
}

func (*fakeLease) StoreMark(context.Context, int64, int64) error { return nil }

// A lost machine id lease makes /readyz 503 "fenced" until it is held
// again; the metrics say so.
func TestReadyzFollowsTheLease(t *testing.T) {
	lease := &fakeLease{holders: make(chan machineid.Holder, 1)}
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		s := cfg.Service
		s.Lease = lease
		return service.New(ctx, s)
	}
	srv := newServer(testConfig(t, "--segment-store", "off"), start)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := serve(t, ctx, srv)
	h := <-lease.holders
	hour := int64(time.Hour)

	r := get(t, base+"/readyz")
	require.Equal(t, 503, r.status)
	assert.Contains(t, r.body, `"status":"starting"`, "no id held yet: New waits")

	require.NoError(t, h.Hold(ctx, 5, h.Now()+hour, 0))
	<-srv.Ready()
	assert.JSONEq(t, `{"status":"ready"}`, get(t, base+"/readyz").body)
	m := get(t, base+"/metrics").body
	assert.Equal(t, 1.0, metricValue(t, m, "vesta_machine_lease_held"))
	assert.Equal(t, 5.0, metricValue(t, m, "vesta_machine_id"))
	assert.Equal(t, 0.0, metricValue(t, m, "vesta_machine_lease_fences_total"))
	assert.Equal(t, 1.0, metricValue(t, m, "vesta_ready"))
	st := status(t, base)
	require.NotNil(t, st.Machine.Lease)
	assert.Equal(t, "ready", st.State)
	assert.True(t, st.Machine.Lease.Held)
	assert.False(t, st.Machine.Lease.Fenced)
	assert.Greater(t, st.Machine.Lease.TTLLeftMillis, int64(0))
	assert.LessOrEqual(t, st.Machine.Lease.TTLLeftMillis, time.Hour.Milliseconds())

	h.Lost()
	r = get(t, base+"/readyz")
	require.Equal(t, 503, r.status)
	assert.JSONEq(t, `{"status":"fenced","error":"machine id lease not held (fenced): no IDs until it is held again, which happens by itself"}`, r.body)
	r = get(t, base+"/genid")
	require.Equal(t, 503, r.status)
	assert.Contains(t, mustErrorText(t, r), "fenced")
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	m = get(t, base+"/metrics").body
	assert.Equal(t, 0.0, metricValue(t, m, "vesta_machine_lease_held"))
	assert.Equal(t, 1.0, metricValue(t, m, "vesta_machine_lease_fences_total"))
	assert.Equal(t, 0.0, metricValue(t, m, "vesta_ready"))
	st = status(t, base)
	assert.Equal(t, "fenced", st.State)
	assert.NotEmpty(t, st.StateReason)
	assert.True(t, st.Machine.Lease.Fenced, "the page says fenced")
	assert.Zero(t, st.Machine.Lease.TTLLeftMillis)
	assert.Equal(t, uint64(1), st.Machine.Lease.Fences)

	require.NoError(t, h.Hold(ctx, 9, h.Now()+hour, 0))
	assert.JSONEq(t, `{"status":"ready"}`, get(t, base+"/readyz").body)
	r = get(t, base+"/genid")
	require.Equal(t, 200, r.status, r.body)
	id := parseLines(t, r.body+"\n")[0]
	assert.Equal(t, int64(9), intf.Id(id).Fields().Machine, "IDs carry the machine now held")
	m = get(t, base+"/metrics").body
	assert.Equal(t, 9.0, metricValue(t, m, "vesta_machine_id"))
	assert.Equal(t, 1.0, metricValue(t, m, "vesta_machine_lease_held"))
	assert.Equal(t, 1.0, metricValue(t, m, "vesta_ready"))

	cancel()
	require.NoError(t, <-done)
}
