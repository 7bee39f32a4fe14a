package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitOf waits (bounded) for a process that must stop by itself and
// returns its exit code and log.
func (p *process) exitOf(t *testing.T) (int, string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("server-rest did not exit; log:\n%s", p.logText())
	}
	_ = p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode(), p.logText()
}

// A mark no ID can reach (here the largest int64) is corrupt: the server
// refuses to start, naming the file, instead of starting and hanging the
// first /genid and its own shutdown.
func TestServerRefusesUnreachableMark(t *testing.T) {
	t.Parallel() // its own server processes, data dir and port
	dataDir := t.TempDir()
	mark := filepath.Join(dataDir, "highwater")
	require.NoError(t, os.WriteFile(mark, []byte(strconv.FormatInt(1<<63-1, 10)+"\n"), 0o600))
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "5", "--data-dir", dataDir)
	code, log := p.exitOf(t)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, log, "high-water mark is corrupt")
	assert.Contains(t, log, mark)
	assert.Contains(t, log, "9223372036854775807")
}

// get returns the status of GET url (0 when the request failed).
func get(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The data dir is locked as a directory: deleting every file in it
// (vesta.lock of earlier versions, the mark) while A runs does not let B
// start beside A on the same dir and machine id.
func TestDataDirStaysLockedWhenItsFilesAreDeleted(t *testing.T) {
	t.Parallel() // its own server processes, data dir and port
	dataDir := t.TempDir()
	a := start(t, "--listen", "127.0.0.1:0", "--machine", "9", "--data-dir", dataDir)
	base := a.waitReady(t)
	require.Equal(t, http.StatusOK, get(base+"/genid"))
	entries, err := os.ReadDir(dataDir)
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, os.RemoveAll(filepath.Join(dataDir, e.Name())))
	}
	b := start(t, "--listen", "127.0.0.1:0", "--machine", "9", "--data-dir", dataDir)
	code, log := b.exitOf(t)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, log, "data dir is locked by another process")
	assert.Equal(t, http.StatusOK, get(base+"/genid"), "A goes on")
	a.stop(t)
}

// A data dir renamed away and made anew at its path may be taken by B:
// A stops issuing (503) at its next mark write, about a second later.
func TestReplacedDataDirStopsIssuing(t *testing.T) {
	t.Parallel() // its own server processes, data dir and port
	parent := t.TempDir()
	dataDir := filepath.Join(parent, "data")
	a := start(t, "--listen", "127.0.0.1:0", "--machine", "9", "--data-dir", dataDir)
	base := a.waitReady(t)
	require.Equal(t, http.StatusOK, get(base+"/genid"))
	require.NoError(t, os.Rename(dataDir, filepath.Join(parent, "old")))
	require.NoError(t, os.Mkdir(dataDir, 0o700))
	require.Eventually(t, func() bool { return get(base+"/genid") == http.StatusServiceUnavailable },
		20*time.Second, 20*time.Millisecond, "A stops issuing")
	b := start(t, "--listen", "127.0.0.1:0", "--machine", "9", "--data-dir", dataDir)
	bBase := b.waitReady(t)
	assert.Equal(t, http.StatusOK, get(bBase+"/genid"))
	assert.Equal(t, http.StatusServiceUnavailable, get(base+"/genid"), "A stays stopped")
	assert.Contains(t, a.logText(), "data dir was removed or replaced while in use")
	b.stop(t)
}
