package rpcproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

var errNoVmRSS = errors.New("no VmRSS")

// RSS is the resident set size of process pid in bytes
// (/proc/PID/status VmRSS; Linux only).
func RSS(pid int) (int64, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := vmRSS(string(b))
	if err != nil {
		return 0, fmt.Errorf("%w in %s", err, path)
	}
	return n, nil
}

// vmRSS reads the VmRSS line ("VmRSS:   1234 kB") of a /proc/PID/status
// text, in bytes.
func vmRSS(status string) (int64, error) {
	for _, l := range strings.Split(status, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errNoVmRSS
}
