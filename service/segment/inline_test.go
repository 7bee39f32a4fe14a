package segment_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Sequence.Next's fast path is inlined into its callers (segbuf.Take's
// shape: see its comment), in the generator and in the client: what makes
// it cost about a bare atomic add. A Go release that prices it higher
// fails here, not silently in a benchmark.
func TestSequenceNextIsInlined(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", "../../service/segment", "../../client").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	var generator, client bool // lines like ../../client/sequence.go:41:6: can inline (*Sequence).Next
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "sequence.go:") && strings.HasSuffix(line, ": can inline (*Sequence).Next") {
			if strings.Contains(line, "client/") {
				client = true
			} else {
				generator = true
			}
		}
	}
	if !generator || !client {
		t.Errorf("(*Sequence).Next is not inlinable any more (generator %v, client %v):\n%s", generator, client, out)
	}
}
