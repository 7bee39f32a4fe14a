package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// A data dir whose mark was removed between two runs is refused, not taken
// as a first start (which would repeat the first run's IDs when it comes in
// the same second). --reset-data-dir accepts it once the clock is past the
// last IDs, and the IDs then issued repeat nothing; left on, it is refused.
func TestServerRefusesADataDirThatLostItsMark(t *testing.T) {
	t.Parallel() // its own server processes, data dir and port
	dataDir := t.TempDir()
	args := []string{"--listen", "127.0.0.1:0", "--machine", "11", "--data-dir", dataDir}
	client := &http.Client{Timeout: 10 * time.Second}

	a := start(t, args...)
	first, err := takeIds(context.Background(), client, a.waitReady(t), 5)
	require.NoError(t, err)
	a.stop(t)
	for _, f := range []string{"highwater", "highwater.prev"} {
		require.NoError(t, os.Remove(filepath.Join(dataDir, f)))
	}

	b := start(t, args...)
	code, log := b.exitOf(t)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, log, "high-water mark is missing from a data dir used before")
	assert.Contains(t, log, dataDir)
	assert.Contains(t, log, "--reset-data-dir")

	// The operator makes sure the clock is past the last IDs, then resets.
	var last time.Time
	for _, id := range first {
		if ts := intf.Id(id).Time(intf.DefaultEpochMillis); ts.After(last) {
			last = ts
		}
	}
	time.Sleep(time.Until(last.Add(time.Second)))
	c := start(t, append(args, "--reset-data-dir")...)
	second, err := takeIds(context.Background(), client, c.waitReady(t), 5)
	require.NoError(t, err)
	c.stop(t)
	assert.Contains(t, c.logText(), "resetDataDir")
	seen := map[int64]bool{}
	for _, id := range append(first, second...) {
		require.False(t, seen[id], "duplicate ID %d", id)
		seen[id] = true
	}
	assert.Greater(t, second[0], first[len(first)-1])

	d := start(t, append(args, "--reset-data-dir")...)
	code, log = d.exitOf(t)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, log, "nothing to reset")
}
