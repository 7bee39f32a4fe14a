package deploycheck

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests from deploy/, the folder of the files they
// check, so that their paths read as the files' own.
func TestMain(m *testing.M) {
	if err := os.Chdir("../../deploy"); err != nil {
		fmt.Fprintln(os.Stderr, "deploycheck:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
