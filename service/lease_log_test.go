package service_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/service"
)

// A hold and a loss are logged by the lease, with its details (etcdlease:
// node, why); the service logs them only at debug level, so that an
// operator reads each event once.
func TestLeaseEventsAreTheLeasesToLog(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var log syncbuf.Buffer
		lease := newFakeLease()
		type result struct {
			svc *service.Service
			err error
		}
		done := make(chan result, 1)
		go func() {
			svc, err := service.New(bg, service.Settings{Lease: lease, Clock: newFakeClock(testStart), NoDataDir: true,
				Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: level}))})
			done <- result{svc, err}
		}()
		h := <-lease.holders
		require.NoError(t, h.Hold(bg, 3, h.Now()+int64(time.Hour), 0))
		r := <-done
		require.NoError(t, r.err)
		h.Lost()
		require.NoError(t, r.svc.Close())
		if level == slog.LevelInfo {
			assert.NotContains(t, log.String(), "machine id held")
			assert.NotContains(t, log.String(), "lease lost")
		} else {
			assert.Contains(t, log.String(), `level=DEBUG msg="vesta: machine id held" machine=3`)
			assert.Contains(t, log.String(), `level=DEBUG msg="vesta: machine id lease lost`)
		}
	}
}
