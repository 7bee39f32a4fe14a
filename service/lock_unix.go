//go:build unix

package service

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock that the kernel drops when the
// process dies, so a crash never leaves a stale lock behind.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
