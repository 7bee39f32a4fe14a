package leasekit

import (
	"log/slog"
	"time"
)

// RenewLog logs a lease's renewals that fail, once when they start
// failing and once when the fence takes effect, and the renewal that
// succeeds again.
type RenewLog struct {
	Log      *slog.Logger
	Provider string // "etcdlease"
	failedAt int64  // service clock at the first failure; 0 while renewing
	fenced   bool
}

// Failed records a failed renewal at now (service clock); validUntil is
// the fence.
func (r *RenewLog) Failed(now, validUntil, machine int64, err error) {
	if r.failedAt == 0 {
		r.failedAt = now
		r.Log.Warn(r.Provider+": cannot renew the machine id lease; retrying", "machine", machine,
			"fencedIn", time.Duration(validUntil-now).Round(time.Millisecond), "err", err)
	}
	if !r.fenced && now >= validUntil {
		r.fenced = true
		r.Log.Error(r.Provider+": machine id fenced: the lease was not renewed in time; no IDs until it is",
			"machine", machine, "failingFor", time.Duration(now-r.failedAt).Round(time.Millisecond))
	}
}

// Renewed records a renewal that succeeded at now.
func (r *RenewLog) Renewed(now, machine int64) {
	if r.failedAt != 0 {
		r.Log.Info(r.Provider+": machine id lease renewed again", "machine", machine,
			"failedFor", time.Duration(now-r.failedAt).Round(time.Millisecond), "wasFenced", r.fenced)
		r.failedAt, r.fenced = 0, false
	}
}
