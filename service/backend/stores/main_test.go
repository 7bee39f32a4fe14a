package stores_test

import (
	"os"
	"testing"

	"github.com/vesta-go/vesta/service/backend/pgtest"
)

// TestMain stops the package's one PostgreSQL server (started by the
// first test that needs it) after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}
