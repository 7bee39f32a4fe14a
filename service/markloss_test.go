package service_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// A data dir that was used before but lost its mark must not be taken as
// a first start: a restart in the same second would repeat the previous
// run's IDs. Every test here restarts on a fake clock that has not moved,
// so a repeat would be certain, not likely.

// usedDir runs a service on a new dir, issues 5 IDs and closes it. The
// clock stays in the second the IDs were issued in.
func usedDir(t *testing.T) (dir string, clk *fakeClock, ids []intf.Id) {
	t.Helper()
	dir, clk = t.TempDir(), newFakeClock(testStart)
	svc := startDir(t, dir, clk, service.Settings{})
	ids = genN(t, svc, 5)
	require.NoError(t, svc.Close())
	require.FileExists(t, filepath.Join(dir, "vesta.used"), "the marker is written with the first mark")
	require.FileExists(t, filepath.Join(dir, "highwater.prev"), "the mark has a copy")
	return dir, clk, ids
}

// requireNoRepeat starts a service on dir with s, takes 5 IDs and fails
// if any of them was issued before.
func requireNoRepeat(t *testing.T, dir string, clk *fakeClock, s service.Settings, before []intf.Id) {
	t.Helper()
	svc := startDir(t, dir, clk, s)
	defer svc.Close()
	ids := genN(t, svc, 5)
	l := layoutOf(t, intf.MaxPeak)
	_, err := checkUnique(l, [][]intf.Id{before, ids})
	require.NoError(t, err, "no ID of the previous run is issued again")
	assert.Greater(t, minUnit(l, ids), maxUnit(l, before))
}

func TestMarkRemovedIsRefused(t *testing.T) {
	dir, clk, first := usedDir(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "highwater")))
	_, err := newDirService(dir, clk, service.Settings{})
	require.Error(t, err)
	assert.ErrorIs(t, err, service.ErrMarkMissing)
	for _, want := range []string{dir, "used before (vesta.used, highwater.prev)", "has no high-water mark",
		"cp " + filepath.Join(dir, "highwater.prev"), "--reset-data-dir", "surely past the last IDs"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoFileExists(t, filepath.Join(dir, "highwater"), "a refused start writes nothing")

	// A reset accepts the dir; the copy still bounds it, so even in the
	// same second nothing is repeated.
	logs := &logBuffer{}
	requireNoRepeat(t, dir, clk, service.Settings{ResetDataDir: true, Logger: logs.logger()}, first)
	assert.Contains(t, logs.String(), "resetDataDir")
	// Once reset, the dir has a mark again: the flag must go.
	_, err = newDirService(dir, clk, service.Settings{ResetDataDir: true})
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nothing to reset")
	requireNoRepeat(t, dir, clk, service.Settings{}, first)
}

// Both the mark and its copy removed: only the marker is left, and it is
// enough to refuse. A reset with the clock past the last IDs issues above.
func TestMarkAndCopyRemovedIsRefused(t *testing.T) {
	dir, clk, first := usedDir(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "highwater")))
	require.NoError(t, os.Remove(filepath.Join(dir, "highwater.prev")))
	_, err := newDirService(dir, clk, service.Settings{})
	assert.ErrorIs(t, err, service.ErrMarkMissing)
	assert.Contains(t, err.Error(), "(vesta.used)")
	assert.NotContains(t, err.Error(), "cp ", "no copy to restore from")

	clk.Advance(2 * time.Second) // the operator made sure the clock is past them
	requireNoRepeat(t, dir, clk, service.Settings{ResetDataDir: true}, first)
}

func TestMarkEmptiedIsRefused(t *testing.T) {
	dir, clk, first := usedDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "highwater"), nil, 0o600))
	_, err := newDirService(dir, clk, service.Settings{})
	assert.ErrorIs(t, err, service.ErrCorruptMark)
	assert.Contains(t, err.Error(), filepath.Join(dir, "highwater")+` holds ""`)
	assert.Contains(t, err.Error(), "restore it from its copy")
	requireNoRepeat(t, dir, clk, service.Settings{ResetDataDir: true}, first)
}

func TestMarkDanglingSymlinkIsRefused(t *testing.T) {
	dir, clk, first := usedDir(t)
	mark := filepath.Join(dir, "highwater")
	require.NoError(t, os.Remove(mark))
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone"), mark))
	_, err := newDirService(dir, clk, service.Settings{})
	assert.ErrorIs(t, err, service.ErrCorruptMark)
	assert.Contains(t, err.Error(), "is a symlink to")
	assert.Contains(t, err.Error(), "which does not exist")

	// Even with the marker and the copy gone, a dangling symlink is a
	// trace: never a first start.
	require.NoError(t, os.Remove(filepath.Join(dir, "highwater.prev")))
	require.NoError(t, os.Remove(filepath.Join(dir, "vesta.used")))
	_, err = newDirService(dir, clk, service.Settings{})
	assert.ErrorIs(t, err, service.ErrCorruptMark)

	clk.Advance(2 * time.Second)
	requireNoRepeat(t, dir, clk, service.Settings{ResetDataDir: true}, first)
	fi, err := os.Lstat(mark)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the symlink was replaced by a mark")
}

// A mark lowered by hand (or restored from an old backup) is raised to its
// copy, with a warning: the restart in the same second repeats nothing.
func TestMarkLoweredTakesItsCopy(t *testing.T) {
	dir, clk, first := usedDir(t)
	mark := filepath.Join(dir, "highwater")
	lowered := clk.Now().Add(-time.Hour).UnixMilli()
	require.NoError(t, os.WriteFile(mark, []byte(strconv.FormatInt(lowered, 10)+"\n"), 0o600))
	logs := &logBuffer{}
	requireNoRepeat(t, dir, clk, service.Settings{Logger: logs.logger()}, first)
	assert.Contains(t, logs.String(), "is below its copy")
	assert.Contains(t, logs.String(), "the higher one counts")
}

// A copy that cannot be read may hide a higher mark: refused.
func TestMarkCopyCorruptIsRefused(t *testing.T) {
	dir, clk, _ := usedDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "highwater.prev"), []byte("x"), 0o600))
	_, err := newDirService(dir, clk, service.Settings{})
	assert.ErrorIs(t, err, service.ErrCorruptMark)
	assert.Contains(t, err.Error(), filepath.Join(dir, "highwater.prev"))
}

// The lock file of earlier versions is a trace of a run too.
func TestOldLockFileIsATrace(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vesta.lock"), nil, 0o600))
	_, err := newDirService(dir, newFakeClock(testStart), service.Settings{})
	assert.ErrorIs(t, err, service.ErrMarkMissing)
	assert.Contains(t, err.Error(), "vesta.lock")
}

// Segment mode's SQLite file is created before the service starts: it is
// no trace of a run. And a reset of a dir never used is refused.
func TestSegmentFileIsNoTrace(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "segments.db"), []byte("sqlite"), 0o600))
	_, err := newDirService(dir, newFakeClock(testStart), service.Settings{ResetDataDir: true})
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "never used")
	svc := startDir(t, dir, newFakeClock(testStart), service.Settings{})
	require.NoError(t, svc.Close())
}

// A run that issued nothing on a used dir leaves a mark (it cannot drop
// it, as a fresh dir's run does): the next start is not refused, and does
// not wait.
func TestCloseWithoutIdsOnAUsedDirKeepsAMark(t *testing.T) {
	dir, clk, first := usedDir(t)
	l := layoutOf(t, intf.MaxPeak)
	clk.Advance(10 * time.Second)
	svc := startDir(t, dir, clk, service.Settings{})
	require.NoError(t, svc.Close())
	assert.Equal(t, unitStartMs(l, maxUnit(l, first)), readMark(t, dir), "the mark found stays")

	// After a reset without any readable mark, nothing bounds the start:
	// a run that issues nothing leaves the time it started at.
	for _, f := range []string{"highwater", "highwater.prev"} {
		require.NoError(t, os.Remove(filepath.Join(dir, f)))
	}
	svc = startDir(t, dir, clk, service.Settings{ResetDataDir: true})
	require.NoError(t, svc.Close())
	assert.Equal(t, clk.Now().UnixMilli(), readMark(t, dir), "the time the start reached: past every ID, as the reset vouched")
	waits := clk.waits.Load()
	requireNoRepeat(t, dir, clk, service.Settings{}, first)
	assert.Equal(t, waits, clk.waits.Load(), "no wait")
}
