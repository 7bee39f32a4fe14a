package testbin

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// small is a tiny command (testdata: not part of ./...), quick to link.
const small = "github.com/vesta-go/vesta/internal/testbin/testdata/hello"

func TestBuildSharesOneBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	// Two builders at once (as two test packages of a run; build skips
	// the process's memory) wait for each other on the lock and get the
	// same file.
	var paths [2]string
	var errs [2]error
	var wg sync.WaitGroup
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = build(small) })
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Equal(t, paths[0], paths[1])
	assert.Equal(t, "hello", filepath.Base(paths[0]), "the command keeps its name")
	out, err := exec.Command(paths[0]).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "hello\n", string(out))

	stage := filepath.Join(filepath.Dir(filepath.Dir(paths[0])), "stage", "hello")
	before, err := os.Stat(stage)
	require.NoError(t, err)
	again, err := build(small)
	require.NoError(t, err)
	assert.Equal(t, paths[0], again, "an up-to-date build is reused")
	after, err := os.Stat(stage)
	require.NoError(t, err)
	// A new link would come as a new file (go build renames its output
	// into place); an up-to-date one only has its time touched.
	assert.True(t, os.SameFile(before, after), "go build found it up to date: no new link")
	assert.Equal(t, paths[0], Must(t, small), "and remembered by the process")

	stripped := Must(t, small, "-ldflags", "-s -w")
	assert.NotEqual(t, paths[0], stripped, "other flags, another build")
	a, err := os.Stat(paths[0])
	require.NoError(t, err)
	b, err := os.Stat(stripped)
	require.NoError(t, err)
	assert.Less(t, b.Size(), a.Size(), "the flags reached go build")
}

func TestBuildReportsGoBuildErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	_, err := Build("github.com/vesta-go/vesta/no/such/command")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no/such/command")
}

func TestRaiseParallel(t *testing.T) {
	flags := func(args ...string) *flag.FlagSet {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.Int("test.parallel", runtime.GOMAXPROCS(0), "")
		require.NoError(t, fs.Parse(args))
		return fs
	}
	fs := flags()
	raiseParallel(fs, 64)
	assert.Equal(t, "64", fs.Lookup("test.parallel").Value.String())
	fs = flags()
	raiseParallel(fs, 1)
	assert.Equal(t, strconv.Itoa(runtime.GOMAXPROCS(0)), fs.Lookup("test.parallel").Value.String(), "never below GOMAXPROCS")
	fs = flags("-test.parallel", "3")
	raiseParallel(fs, 64)
	assert.Equal(t, "3", fs.Lookup("test.parallel").Value.String(), "a -parallel of the command line stays")
}
