//go:build unix

package testbin

import (
	"os"
	"syscall"
)

// lock takes an exclusive lock on the file p (made if missing), waiting
// for another process that holds it. The kernel drops it if the process
// dies.
func lock(p string) (unlock func(), err error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
