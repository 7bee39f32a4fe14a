package client

import (
	"os"
	"testing"

	"github.com/vesta-go/vesta/internal/testbin"
)

// TestMain lets up to 8 parallel tests run at once (unless -parallel says
// otherwise): they wait on server processes, stopped servers and call
// timeouts, not on the CPU.
func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	os.Exit(m.Run())
}
