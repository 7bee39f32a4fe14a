package grayfail_test

import (
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/scripts/grayfail"
)

// grayEnv returns an Env on the server-rpc binary (one build shared by
// the packages of a run, internal/testbin), with its data dirs in the
// test's temp dir.
func grayEnv(t *testing.T) *grayfail.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts server-rpc processes")
	}
	return &grayfail.Env{Bin: rpctest.BuildServerRPC(t), Dir: t.TempDir()}
}

// The gray-failure rows, through real server-rpc processes. The bounds are
// generous (a noisy 2-core machine); scripts/bench-grayfail.sh prints the
// figures against the tight targets.
//
// This one counts the goroutines of its whole process, which no other test
// may start or end meanwhile: it runs alone in a child process (this test
// binary, told to run only this test), so that here it can run in
// parallel with the others.
func TestGrayFailureStoppedServer(t *testing.T) {
	if bin := os.Getenv(stoppedChildEnv); bin != "" {
		testGrayFailureStoppedServer(t, &grayfail.Env{Bin: bin, Dir: t.TempDir()})
		return
	}
	t.Parallel()
	e := grayEnv(t)
	args := []string{"-test.run=^TestGrayFailureStoppedServer$", "-test.count=1", "-test.v"}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), stoppedChildEnv+"="+e.Bin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the test failed in its child process:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestGrayFailureStoppedServer", "the child ran the test:\n%s", out)
}

// stoppedChildEnv carries the server-rpc binary to the child process of
// TestGrayFailureStoppedServer, and tells it that it is the child.
const stoppedChildEnv = "GRAYFAIL_TEST_STOPPED_BIN" // not VESTA_*: server-rpc refuses unknown VESTA_ variables

func testGrayFailureStoppedServer(t *testing.T, e *grayfail.Env) {
	s, err := e.Stopped(64, time.Second)
	require.NoError(t, err)
	assert.Positive(t, s.Calls)
	assert.Less(t, s.OverDeadline, time.Second, "slowest call %v: %s", s.Slowest, s.SlowestErr)
	assert.Less(t, s.Close, time.Second)
	assert.LessOrEqual(t, s.Goroutines, 0, "goroutines left behind")
}

// The other rows each start their own servers (own ports, data dirs and
// machine ids) and spend most of their time waiting on real time (a stop,
// a restart, the windows after a kill), so they run at the same time, with
// the package's other parallel tests: their subtests are started from
// goroutines, so all of them run at once whatever -parallel says.
//
// The stop, restart and rolling kill rows (2-3 s each of stops and
// restarts in real time) are stress only; a plain run keeps the buffered
// Close and the wire rows here, and covers failing over and reconnecting
// in process (TestFailoverUnderLoad, TestReconnectAfterRestart) and a
// stopped server by TestGrayFailureStoppedServer.
func TestGrayFailureRealServers(t *testing.T) {
	t.Parallel()
	e := grayEnv(t)
	scenarios := []struct {
		name   string
		stress string // why the row is stress only ("": it runs in a plain go test)
		run    func(t *testing.T)
	}{
		{"buffered client: Close with the server stopped mid-refill", "", func(t *testing.T) {
			d, err := e.BufferedClose()
			require.NoError(t, err)
			assert.Less(t, d, time.Second)
		}},
		{"A stopped, B healthy: calls go to B", "SIGSTOPs one of two real servers for 2 s", func(t *testing.T) {
			f, err := e.Failover(16, 300*time.Millisecond, 2*time.Second)
			require.NoError(t, err)
			require.Positive(t, f.After)
			assert.GreaterOrEqual(t, float64(f.AfterOK)/float64(f.After), 0.95, "%+v", f)
			assert.Zero(t, f.Duplicates)
		}},
		{"the only server restarts: used at once", "stops and restarts the only real server", func(t *testing.T) {
			r, err := e.Restart(16, 500*time.Millisecond)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, r.FirstOK, time.Duration(0), "a call succeeded after the restart")
			assert.Less(t, r.FirstOK, 3*time.Second)
			assert.Zero(t, r.Duplicates)
		}},
		{"rolling kill: no failure while a server is up", "kills and restarts real servers in turn", func(t *testing.T) {
			r, err := e.Rolling(16, 500*time.Millisecond)
			require.NoError(t, err)
			assert.Zero(t, r.FailedWhileUp, r.LastErr)
			assert.Zero(t, r.Duplicates)
		}},
		{"the server refuses what it should", "", func(t *testing.T) {
			w, err := e.Wire()
			require.NoError(t, err)
			assert.Less(t, w.HugeTagErrLen, 300)
			assert.Zero(t, w.PastDeadlineIds)
			assert.Contains(t, w.PastDeadlineErr, "deadline")
			assert.Contains(t, w.UnknownBitsErr, "set")
		}},
	}
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		wg.Go(func() {
			t.Run(sc.name, func(t *testing.T) {
				if sc.stress != "" {
					stresstest.Only(t, sc.stress)
				}
				sc.run(t)
			})
		})
	}
	wg.Wait()
}
