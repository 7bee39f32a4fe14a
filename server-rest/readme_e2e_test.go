package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/intf"
)

// readmeBlock is the fenced sh block that follows the paragraph starting
// with marker in file: its lines, comments and all.
func readmeBlock(t *testing.T, file, marker string) []string {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var (
		lines         []string
		seen, inBlock bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !seen:
			seen = strings.HasPrefix(line, marker)
		case !inBlock:
			inBlock = line == "```sh"
		case line == "```":
			return lines
		default:
			lines = append(lines, line)
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("%s: no ```sh block after %q", file, marker)
	return nil
}

// The README's secure start, pasted in order into a shell on a machine
// with openssl and curl, makes the certificates, the token and the auth
// file, starts the server, and gets an ID with the token and a 401
// without it.
//
// The block is read from README.md and run by sh -e in a temporary
// directory with three substitutions, each of which must apply: "go run
// ./server-rest" and "go run ./cmd/vesta-token" become the binaries
// internal/testbin built (the same packages, without compiling them at
// every run), and the port 8080 a free one. The environment adds
// XDG_STATE_HOME and HOME in that directory, so that the server's data
// dir and curl's configuration are the test's own.
func TestReadmeSecureStart(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"sh", "openssl", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: the README's secure start needs %s: %v", tool, err)
		}
	}
	vestaToken := testbin.Must(t, "github.com/vesta-go/vesta/cmd/vesta-token")
	lines := readmeBlock(t, "../README.md", "**Secure start**")
	script := strings.Join(lines, "\n") + "\n"
	for _, sub := range []struct{ from, to string }{
		{"go run ./server-rest", shellQuote(binary)},
		{"go run ./cmd/vesta-token", shellQuote(vestaToken)},
		{"8080", strconv.Itoa(freePort(t))},
	} {
		require.Contains(t, script, sub.from, "the README's block no longer has %q", sub.from)
		script = strings.ReplaceAll(script, sub.from, sub.to)
	}

	dir := t.TempDir()
	stdout, stderr := filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	outF, err := os.Create(stdout)
	require.NoError(t, err)
	defer outF.Close()
	errF, err := os.Create(stderr)
	require.NoError(t, err)
	defer errF.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "HOME="+dir)
	// Files, not pipes: the server the block starts in the background
	// keeps its stderr open after the shell exits. Its own process group,
	// so that the cleanup stops that server too.
	cmd.Stdout, cmd.Stderr = outF, errF
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	pgid := cmd.Process.Pid
	t.Cleanup(func() { stopGroup(t, pgid) })
	runErr := cmd.Wait()
	out, _ := os.ReadFile(stdout)
	log, _ := os.ReadFile(stderr)
	require.NoError(t, runErr, "the block failed; stdout:\n%s\nstderr:\n%s", out, log)

	// readyz, the ID, then the refusal with its status line and headers.
	text := strings.ReplaceAll(string(out), "\r\n", "\n")
	assert.Contains(t, text, `{"status":"ready"}`)
	m := regexp.MustCompile(`(?m)^-?[0-9]{1,20}$`).FindString(text)
	require.NotEmpty(t, m, "no ID in the output:\n%s", text)
	id, err := intf.ParseId(m)
	require.NoError(t, err)
	assert.Equal(t, int64(17), id.Fields().Machine, "the ID is the machine's of the block (--machine 17)")
	assert.Regexp(t, `(?m)^HTTP/[0-9.]+ 401`, text, "the call without a token is refused")
	assert.Regexp(t, `(?mi)^www-authenticate: Bearer realm="vesta"`, text)
	assert.Contains(t, text, `"header":"Authorization"`)
	token, err := os.ReadFile(filepath.Join(dir, "orders.token"))
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(string(token)))
	assert.NotContains(t, string(log), strings.TrimSpace(string(token)), "the token is in no log")
}

// freePort is a TCP port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// stopGroup ends process group pgid (SIGTERM, then SIGKILL) and waits
// until none of it is left.
func stopGroup(t *testing.T, pgid int) {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return
	}
	gone := func() bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }
	deadline := time.Now().Add(10 * time.Second)
	for !gone() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		assert.Eventually(t, gone, 10*time.Second, 10*time.Millisecond, fmt.Sprintf("process group %d", pgid))
	}
}
