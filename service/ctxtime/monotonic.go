package ctxtime

import "time"

// processStart anchors Monotonic.
var processStart = time.Now()

// Monotonic is the time since the process started, read from the
// monotonic clock alone: time.Now reads the wall clock too, which costs as
// much again, and the doors time every call with two readings.
func Monotonic() time.Duration { return time.Since(processStart) }

// At is the time of the Monotonic reading m. It carries a monotonic
// reading, so that comparisons, time.Until and timers use that clock
// alone, and costs no clock read: a deadline built from a reading the
// caller already took (WithTimeoutCauseFrom).
func At(m time.Duration) time.Time { return processStart.Add(m) }

// Now is the present time from the monotonic clock alone: for times that
// are only compared or subtracted (quotas, rates), at the cost of one
// clock read instead of time.Now's two. Its wall reading is the process's
// start plus the time since, so it does not follow a wall clock set since.
func Now() time.Time { return At(Monotonic()) }
