package generatorsuite_test

import (
	"flag"
	"os"
	"testing"

	"github.com/vesta-go/vesta/service/backend/pgtest"
)

// TestMain stops the package's one PostgreSQL server (started by the
// first test that needs it) after the tests. Benchmarks run it with fsync
// on, as in production.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		pgtest.SharedOptions.Fsync = true
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}
