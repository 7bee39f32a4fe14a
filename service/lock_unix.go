//go:build unix

package service

import (
	"os"
	"strconv"
	"syscall"
)

// lockFile takes an exclusive advisory lock that the kernel drops when the
// process dies, so a crash never leaves a stale lock behind.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// dirIdentity names the directory f is open on: its device and inode. A
// copy of the directory (another path, or a restored backup on another
// file system) has another identity.
func dirIdentity(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10)
}
