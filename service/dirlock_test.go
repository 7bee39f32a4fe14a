package service_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// The lock is on the directory itself: deleting every file in it while a
// service runs does not let a second one in.
func TestDataDirLockSurvivesDeletedFiles(t *testing.T) {
	dir := t.TempDir()
	clk := newFakeClock(testStart)
	svc := startDir(t, dir, clk, service.Settings{})
	defer svc.Close()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	_, err = newDirService(dir, clk, service.Settings{})
	require.Error(t, err)
	assert.ErrorIs(t, err, service.ErrDataDirLocked)
	_, err = svc.GenId(bg)
	require.NoError(t, err, "the first service goes on")
}

// A data dir removed or renamed as a whole, and a new one made at its
// path, can be taken by a second process: the first stops issuing at its
// next mark write, and never writes into the new directory.
//
// It runs in a synctest bubble (see background_test.go): the background's
// next round is one second of the bubble's fake time away.
func TestDataDirReplacedStopsIssuing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { testDataDirReplacedStopsIssuing(t) })
}

func testDataDirReplacedStopsIssuing(t *testing.T) {
	enterBubbleAt(testStart)
	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	clk := newFakeClock(testStart)
	svc := startDir(t, dir, clk, service.Settings{})
	defer svc.Close()
	_, err := svc.GenId(bg)
	require.NoError(t, err)

	require.NoError(t, os.Rename(dir, filepath.Join(parent, "moved")))
	require.NoError(t, os.Mkdir(dir, 0o700))
	// The background's next mark write, one round later, notices.
	time.Sleep(time.Second)
	synctest.Wait()
	_, err = svc.GenId(bg)
	require.Error(t, err, "the first service stops issuing at the next mark write")
	assert.ErrorIs(t, err, intf.ErrNotPersisted)
	assert.ErrorIs(t, err, service.ErrDataDirLost)
	assert.Contains(t, err.Error(), dir)
	_, statErr := os.Stat(filepath.Join(dir, "highwater"))
	assert.ErrorIs(t, statErr, os.ErrNotExist, "no mark written into the new directory")

	other := startDir(t, dir, clk, service.Settings{})
	defer other.Close()
	_, err = other.GenId(bg)
	require.NoError(t, err, "the new directory is free for another process")
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, service.ErrDataDirLost, "stopped for good")
}
