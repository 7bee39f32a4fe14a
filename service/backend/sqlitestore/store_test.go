package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every connection runs in WAL mode with a busy timeout and full sync, so
// several processes can share the file safely.
func TestPragmas(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a", FileName)
	s, err := Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, path, s.Path())
	var mode string
	var timeout, sync int
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout))
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync))
	assert.Equal(t, "wal", mode)
	assert.Equal(t, BusyTimeoutMillis, timeout)
	assert.Equal(t, 2, sync, "FULL")
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", "/tmp/x.db?mode=ro", "/tmp/x#y.db"} {
		_, err := Open(context.Background(), p)
		assert.Error(t, err, p)
	}
}
