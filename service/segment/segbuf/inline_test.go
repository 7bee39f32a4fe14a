package segbuf_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Sequence.Next's fast path is inlined into its callers (Take's shape: see
// its comment), the generator's and the client's handles being this one
// type: what makes it cost about a bare atomic add. A Go release that
// prices it higher fails here, not silently in a benchmark.
func TestSequenceNextIsInlined(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), ": can inline (*Sequence).Next") {
		t.Errorf("(*Sequence).Next is not inlinable any more:\n%s", out)
	}
}
