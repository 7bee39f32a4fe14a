// Package testbin builds the module's commands for tests that run the real
// binaries (server-rpc, server-rest), once per source state rather than
// once per test package.
//
// A go test ./... runs several packages that each need server-rpc; linking
// it takes 2-3 s of CPU, every time into a fresh directory. Build instead
// keeps one output per (module directory, package, flags) under
// os.TempDir and lets go build decide whether it is up to date, as it
// does for any -o target: the first package of a run links, the others
// (and later runs, until a source changes) find it current in about half
// a second. A file lock serialises the packages that build at the same
// time.
//
// The path Build returns is a copy named by its content, never written
// again: a test may start it while another package's go build, after a
// source change, links a new one.
//
// RaiseParallel lets the tests of such a package, which wait on processes
// rather than on the CPU, run more at once than -parallel's default.
package testbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// keepOld is how long superseded copies stay, for test processes of an
// older run that still start them.
const keepOld = time.Hour

// Build returns the path of the command pkg (an import path, e.g.
// github.com/vesta-go/vesta/server-rpc) as go build makes it with the
// extra flags (e.g. "-ldflags", "-X ..."). It runs go build in the current
// directory, which must be inside the module (a test's package directory
// is).
func Build(pkg string, flags ...string) (string, error) {
	// A process asks go build once per binary: the sources do not change
	// under a running test.
	key := strings.Join(append([]string{pkg}, flags...), "\x00")
	built.mu.Lock()
	defer built.mu.Unlock()
	if p, ok := built.paths[key]; ok {
		return p, nil
	}
	p, err := build(pkg, flags...)
	if err == nil {
		built.paths[key] = p
	}
	return p, err
}

// built remembers the binaries this process has built.
var built = struct {
	mu    sync.Mutex
	paths map[string]string
}{paths: map[string]string{}}

func build(pkg string, flags ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	name := path.Base(pkg)
	key := sha256.Sum256([]byte(strings.Join(append([]string{root, pkg}, flags...), "\x00")))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("vesta-testbin-%d", os.Getuid()), hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(filepath.Join(dir, "stage"), 0o700); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	unlock, err := lock(filepath.Join(dir, "lock"))
	if err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	defer unlock()

	stage := filepath.Join(dir, "stage", name)
	args := append(append([]string{"build", "-o", stage}, flags...), pkg)
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testbin: go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	sum, err := fileSum(stage)
	if err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	// The copy keeps the command's name: it shows in usage and logs.
	final := filepath.Join(dir, sum, name)
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	if err := copyExecutable(stage, final); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	pruneOld(dir, sum)
	return final, nil
}

// Must is Build for a test: an error fails tb.
func Must(tb testing.TB, pkg string, flags ...string) string {
	tb.Helper()
	bin, err := Build(pkg, flags...)
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("testbin: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("testbin: not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// copyExecutable copies src to dst through a temporary name, so that dst
// appears whole or not at all. cp writes it, not this process: a process
// that a test here forks while the copy is open for writing would inherit
// the descriptor until its exec, and an exec of the copy meanwhile would
// fail with "text file busy" (golang/go#22315).
func copyExecutable(src, dst string) error {
	tmp := dst + ".tmp"
	if out, err := exec.Command("cp", src, tmp).CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cp %s: %w: %s", src, err, out)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// pruneOld removes the copies of earlier source states (the directories
// named by their sum) that are older than keepOld. A process already
// started from one keeps running.
func pruneOld(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "stage" || e.Name() == keep {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > keepOld {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// RaiseParallel sets -test.parallel to n (at least GOMAXPROCS) unless the
// command line set it. A package whose parallel tests wait on processes
// and real time rather than on the CPU (the tests that run the binaries)
// calls it from TestMain, before m.Run, so that more of them wait at once
// than the default of GOMAXPROCS allows.
func RaiseParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	raiseParallel(flag.CommandLine, n)
}

func raiseParallel(fs *flag.FlagSet, n int) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = fs.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}
