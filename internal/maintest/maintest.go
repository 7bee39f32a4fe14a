// Package maintest runs a command's main in a child process of its own
// test binary, so that a test sees what a user sees — the exit code and
// the output — without building the command.
//
// In the command's test file:
//
//	func TestMain(m *testing.M) { maintest.Main(m, main) }
//
//	func TestHelpExitsZero(t *testing.T) {
//		r := maintest.Run(t, "--help")
//		// r.Code, r.Stdout, r.Stderr
//	}
package maintest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// childEnv marks the child process: it runs main instead of the tests.
const childEnv = "MAINTEST_RUN_MAIN" // not VESTA_*: the config loader refuses unknown ones

// Main is the body of a TestMain: in the child process started by Run it
// runs main, with Run's arguments, and exits 0 when main returns; else it
// runs the tests.
func Main(m *testing.M, main func()) {
	if os.Getenv(childEnv) == "1" {
		os.Args = append(os.Args[:1], os.Args[2:]...) // drop the "--" that ends the test binary's flags
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Result is how a run of main ended.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs main with args in a child process of the test binary and
// returns its exit code and output.
func Run(t *testing.T, args ...string) Result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("maintest: %v", err)
	}
	cmd := exec.Command(exe, append([]string{"--"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("maintest: running main: %v", err)
	}
	return Result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
}

// CheckHelp asserts what every command's --help should do, as a user's
// shell sees it: print the usage and exit 0; and a wrong flag fails.
func CheckHelp(t *testing.T) {
	t.Helper()
	r := Run(t, "--help")
	if r.Code != 0 || !bytes.Contains([]byte(r.Stdout+r.Stderr), []byte("Usage")) {
		t.Errorf("--help: exit %d, want 0 and a usage; stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if r = Run(t, "--no-such-flag"); r.Code == 0 {
		t.Errorf("--no-such-flag: exit 0, want a failure")
	}
}
