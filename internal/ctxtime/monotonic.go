package ctxtime

import "time"

// processStart anchors Monotonic.
var processStart = time.Now()

// Monotonic is the time since the process started, read from the
// monotonic clock alone: time.Now reads the wall clock too, which costs as
// much again, and the doors time every call with two readings.
func Monotonic() time.Duration { return time.Since(processStart) }
