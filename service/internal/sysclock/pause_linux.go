package sysclock

import (
	"runtime"
	"syscall"
	"time"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK.
const prSetTimerSlack = 29

// finePause sleeps d with nanosleep on a thread whose timer slack is 1 ns:
// Linux lets a sleep end up to 50 µs late by default, which would lose 5%
// of a millisecond unit; with the slack set it wakes within microseconds. It
// blocks its thread; the runtime hands the thread's work to another. The
// slack stays set on the thread, which only makes its other sleeps exact.
func finePause(d time.Duration) {
	runtime.LockOSThread()
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // interrupted early: the caller checks the clock again
	runtime.UnlockOSThread()
}
