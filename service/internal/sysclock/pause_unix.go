//go:build unix && !linux

package sysclock

import (
	"syscall"
	"time"
)

// finePause sleeps d with nanosleep, which wakes within about 0.1 ms (a Go
// timer may wake a whole millisecond late). It blocks its thread; the
// runtime hands the thread's work to another.
func finePause(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // interrupted early: the caller checks the clock again
}
