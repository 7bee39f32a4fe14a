package testbin

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// RSS is the resident memory of process pid in bytes, from /proc; the test
// is skipped where there is no /proc.
func RSS(tb testing.TB, pid int) int64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if errors.Is(err, os.ErrNotExist) {
		tb.Skip("no /proc")
	}
	if err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				tb.Fatalf("testbin: VmRSS %q: %v", f[1], err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("testbin: no VmRSS in /proc/%d/status", pid)
	return 0
}
