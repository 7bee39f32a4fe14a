package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
)

// binary is server-rest with a stamped version, built by TestMain (one
// build per source state, shared with later runs: internal/testbin).
var binary string

const testVersion = "v0.0.0-e2e"

// TestMain builds the binary and lets up to 8 tests run at once (unless
// -parallel says otherwise): each starts its own server processes and
// mostly waits on them and on their real clock, not on the CPU.
func TestMain(m *testing.M) {
	testbin.RaiseParallel(8)
	var err error
	binary, err = testbin.Build("github.com/vesta-go/vesta/server-rest",
		"-ldflags", "-X github.com/vesta-go/vesta/internal/buildinfo.Version="+testVersion)
	if err != nil {
		fmt.Fprintln(os.Stderr, "building server-rest:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// process is a running server-rest whose stderr is collected.
type process struct {
	cmd  *exec.Cmd
	addr chan string // the address it listens on, from its log
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{} // stderr closed
}

var listenLine = regexp.MustCompile(`msg="vesta: listening" server=rest addr=(\S+)`)

func start(t *testing.T, args ...string) *process {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with env added to the environment the server inherits.
func startEnv(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return startCmd(t, cmd)
}

// startFiles is start in a process that may open at most files files
// (RLIMIT_NOFILE, set by the shell that then becomes the server).
func startFiles(t *testing.T, files int, args ...string) *process {
	t.Helper()
	return startCmd(t, exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, files), binary}, args...)...))
}

// startCmd starts cmd, a server-rest, collecting its stderr.
func startCmd(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, addr: make(chan string, 1), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil { // still running after a failed test
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				p.addr <- m[1]
			}
		}
	}()
	return p
}

func (p *process) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitReady returns the base URL once /readyz answers 200.
func (p *process) waitReady(t *testing.T) string {
	t.Helper()
	var base string
	select {
	case addr := <-p.addr:
		base = "http://" + addr
	case <-time.After(30 * time.Second):
		t.Fatalf("server-rest did not listen; log:\n%s", p.logText())
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 10*time.Millisecond, "readyz")
	return base
}

// takeIds gets want IDs with one client, alternating single /genid calls
// and /genid?count= batches.
func takeIds(ctx context.Context, client *http.Client, base string, want int) ([]int64, error) {
	ids := make([]int64, 0, want)
	for round := 0; len(ids) < want; round++ {
		url := base + "/genid"
		if round%2 == 1 {
			url += "?count=" + strconv.Itoa(min(1+round*37%500, want-len(ids)))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %d %s", url, resp.StatusCode, body)
		}
		for _, line := range strings.Fields(string(body)) {
			id, err := strconv.ParseInt(line, 10, 64)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func TestEndToEnd(t *testing.T) {
	t.Parallel() // its own server processes, data dir and port
	dataDir := t.TempDir()
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "78", "--data-dir", dataDir)
	base := p.waitReady(t)

	const clients, total = 16, 50_000
	results := make([][]int64, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			results[c], errs[c] = takeIds(context.Background(), &http.Client{Timeout: 30 * time.Second}, base, total/clients)
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))

	seen := make(map[int64]struct{}, total)
	for _, ids := range results {
		for _, id := range ids { // plain comparisons: 150,000 testify calls cost a good part of a second
			if _, dup := seen[id]; dup {
				t.Fatalf("duplicate ID %d", id)
			}
			seen[id] = struct{}{}
			_, l := intf.Decode(intf.Id(id))
			if m := l.Machine.Get(uint64(id)); m != 78 {
				t.Fatalf("machine of %d: %d, want 78", id, m)
			}
			if g := l.GenMethod.Get(uint64(id)); g != intf.GenMethodREST {
				t.Fatalf("genMethod of %d: %d, want %d", id, g, intf.GenMethodREST)
			}
		}
	}
	require.Len(t, seen, total)

	p.stop(t)
	assert.FileExists(t, filepath.Join(dataDir, "highwater"))
}

// stop sends SIGTERM and requires a clean exit (code 0) after a graceful
// shutdown.
func (p *process) stop(t *testing.T) {
	t.Helper()
	// Concurrent requests on http.DefaultTransport may leave a spare
	// connection it dialed while another one served: never used, the
	// server counts it as new, and its graceful stop waits 5 s for it
	// (net/http). Close the idle ones, as a client that is done would.
	http.DefaultClient.CloseIdleConnections()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	<-p.done // all of stderr read: Wait closes the pipe
	err := p.cmd.Wait()
	require.NoError(t, err, "clean exit (code 0); log:\n%s", p.logText())
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode())
	assert.Contains(t, p.logText(), `msg="vesta: stopped" server=rest`)
}

// getBody GETs url, with an Accept header unless accept is "", and
// returns the body of a 200 answer.
func getBody(t *testing.T, url, accept string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, body)
	return string(body)
}

// The README's promise: one flag creates a tag in the SQLite file of the
// data dir, and /segment/{tag} counts from 1; after a restart the numbers
// go on above the ones issued.
func TestEndToEndSegment(t *testing.T) {
	t.Parallel() // its own server processes, data dir and port
	dataDir := t.TempDir()
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "3", "--data-dir", dataDir, "--segment-tags", "order")
	base := p.waitReady(t)
	assert.Equal(t, "1", getBody(t, base+"/segment/order", ""))
	assert.Equal(t, "2", getBody(t, base+"/segment/order", ""))
	assert.Equal(t, "3\n4\n5\n6\n7\n", getBody(t, base+"/segment/order?count=5", ""))
	assert.JSONEq(t, `{"id":"8"}`, getBody(t, base+"/segment/order", "application/json"))
	assert.Contains(t, getBody(t, base+"/metrics", ""), `vesta_segment_ids_issued_total{tag="order"} 8`)
	p.stop(t)
	assert.FileExists(t, filepath.Join(dataDir, "segments.db"))
	assert.Contains(t, p.logText(), "segment mode on")

	p = start(t, "--listen", "127.0.0.1:0", "--machine", "3", "--data-dir", dataDir, "--segment-tags", "order")
	base = p.waitReady(t)
	next, err := strconv.ParseInt(getBody(t, base+"/segment/order", ""), 10, 64)
	require.NoError(t, err)
	assert.Greater(t, next, int64(8), "a restart skips the rest of the range, never repeats")
	p.stop(t)
}
