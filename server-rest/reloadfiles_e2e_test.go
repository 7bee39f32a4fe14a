package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/testbin"
)

// The auth file replaced by a symlink to /dev/zero, then by a FIFO, then
// by a real file: the first two fail the reload at once, logged, the
// clients in force kept and the memory flat; the third is read, so the
// reload loop was never blocked and a removed token stops working (on the
// previous main: /dev/zero grew the server by GBs, a FIFO blocked the
// reloads for good and a removed token stayed valid).
func TestReloadReadsRegularFilesOnly(t *testing.T) {
	t.Parallel()
	const tokA, tokB = "vesta_reload-a-token", "vesta_reload-b-token"
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(authFile(client("a", tokA, "genid"), client("b", tokB, "genid"))), 0o600))
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "37", "--data-dir", t.TempDir(), "--auth-file", auth,
		"--reload-interval", "0")
	base := p.waitReady(t)
	code := func(tok string) int {
		return do(t, &http.Client{Timeout: 5 * time.Second}, base+"/genid", "Authorization", "Bearer "+tok).code
	}
	require.Equal(t, http.StatusOK, code(tokB))
	before := testbin.RSS(t, p.cmd.Process.Pid)
	failures := func() int {
		return strings.Count(p.logText(), `msg="vesta: reload failed; the previous one stays in force"`)
	}

	replace := func(make func(string) error) {
		t.Helper()
		tmp := filepath.Join(dir, "next")
		require.NoError(t, make(tmp))
		require.NoError(t, os.Rename(tmp, auth))
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	}
	replace(func(p string) error { return os.Symlink("/dev/zero", p) })
	require.Eventually(t, func() bool { return failures() == 1 }, 10*time.Second, 10*time.Millisecond, "the /dev/zero reload fails")
	assert.Equal(t, http.StatusOK, code(tokB), "the clients in force stay")
	replace(func(p string) error { return syscall.Mkfifo(p, 0o600) })
	require.Eventually(t, func() bool { return failures() == 2 }, 10*time.Second, 10*time.Millisecond, "the FIFO reload fails")
	assert.Equal(t, http.StatusOK, code(tokB))

	replace(func(p string) error { return os.WriteFile(p, []byte(authFile(client("a", tokA, "genid"))), 0o600) })
	require.Eventually(t, func() bool { return code(tokB) == http.StatusUnauthorized }, 10*time.Second, 10*time.Millisecond,
		"the real file is read: the reload loop was not blocked, b's token is gone")
	assert.Equal(t, http.StatusOK, code(tokA))
	after := testbin.RSS(t, p.cmd.Process.Pid)
	t.Logf("RSS %d MiB before, %d MiB after the reloads", before>>20, after>>20)
	assert.Less(t, after, before+64<<20, "memory stays flat")
	log := p.logText()
	assert.Contains(t, log, "not a regular file")
	p.stop(t)
}
