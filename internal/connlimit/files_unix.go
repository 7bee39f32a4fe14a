//go:build unix

package connlimit

import "syscall"

// FileLimit is how many files the process may hold open: RLIMIT_NOFILE's
// soft limit, which the Go runtime raises to the hard one at start. 0 when
// unknown.
func FileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
