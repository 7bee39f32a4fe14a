package grayfail_test

import (
	"os"
	"testing"

	"github.com/vesta-go/vesta/internal/testbin"
)

// TestMain lets the gray-failure tests run in parallel: they wait on
// server processes and timeouts, not on the CPU.
func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	os.Exit(m.Run())
}
