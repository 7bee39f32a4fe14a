package stores_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/pgtest"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

func quiet() segment.Settings {
	return segment.Settings{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// A restart continues above every ID of the previous run: the buffered
// rest of its ranges is skipped, never reissued.
func TestOpenSQLiteInDataDirSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tags, err := segspec.ParseTags("order,invoice:1000:500")
	require.NoError(t, err)
	cfg := stores.Config{DataDir: dir, Tags: tags, Settings: quiet()}

	g, err := stores.Open(ctx, cfg)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, sqlitestore.FileName))
	assert.Equal(t, []string{"invoice", "order"}, g.Tags())
	first, err := g.NextIds(ctx, "invoice", 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{1000, 1001, 1002}, first)
	require.NoError(t, g.Close())

	cfg.Tags = []segspec.Tag{{Tag: "invoice", MaxId: 1, Step: 1}} // existing rows are kept
	g, err = stores.Open(ctx, cfg)
	require.NoError(t, err)
	defer g.Close()
	next, err := g.NextId(ctx, "invoice")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), next, "the first ID of the next range (step 500)")
}

func TestOpenSQLiteAtDSNPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "ids.db")
	g, err := stores.Open(context.Background(), stores.Config{Store: segspec.SQLite, DSN: path, Settings: quiet()})
	require.NoError(t, err)
	defer g.Close()
	assert.FileExists(t, path)
	assert.Empty(t, g.Tags())
}

func TestOpenPostgres(t *testing.T) {
	t.Parallel() // waits on PostgreSQL's start, not on the CPU
	dsn, err := pgtest.Shared(t).NewDatabase(context.Background())
	require.NoError(t, err)
	cfg := stores.Config{Store: segspec.Postgres, DSN: dsn, Tags: []segspec.Tag{{Tag: "order", MaxId: 1, Step: 10}}, Settings: quiet()}
	g, err := stores.Open(context.Background(), cfg)
	require.NoError(t, err)
	defer g.Close()
	id, err := g.NextId(context.Background(), "order")
	require.NoError(t, err)
	assert.Equal(t, int64(1), id)
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := stores.Open(ctx, stores.Config{Store: segspec.Off})
	assert.ErrorIs(t, err, stores.ErrDisabled)
	assert.False(t, stores.Config{Store: segspec.Off}.Enabled())
	assert.True(t, stores.Config{}.Enabled(), "sqlite is the default")

	_, err = stores.Open(ctx, stores.Config{Store: "mysql"})
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)

	_, err = stores.Open(ctx, stores.Config{Store: segspec.Postgres, DSN: "postgres://127.0.0.1:1/none?connect_timeout=2"})
	assert.Error(t, err, "an unreachable database fails at start")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
	_, err = stores.Open(ctx, stores.Config{DSN: filepath.Join(dir, "file", "x.db")})
	assert.Error(t, err, "a path under a file")

	_, err = stores.Open(ctx, stores.Config{DataDir: t.TempDir(), Tags: []segspec.Tag{{Tag: "x", Step: 0}}})
	assert.ErrorIs(t, err, intf.ErrInvalidArgument, "a bad tag spec")
}

func TestSQLitePathDefault(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	p, err := stores.Config{}.SQLitePath()
	require.NoError(t, err)
	assert.Equal(t, "/state/vesta-go/segments.db", p)
	p, err = stores.Config{DataDir: "/d"}.SQLitePath()
	require.NoError(t, err)
	assert.Equal(t, "/d/segments.db", p)
	p, err = stores.Config{DataDir: "/d", DSN: "/x.db"}.SQLitePath()
	require.NoError(t, err)
	assert.Equal(t, "/x.db", p)
}

// A PostgreSQL that accepts connections and never answers fails the start
// within the open timeout (three LoadTimeouts) instead of hanging it.
func TestOpenGivesUpOnASilentDatabase(t *testing.T) {
	t.Parallel() // waits out its timeouts, not on the CPU
	addr := nettest.Silent(t)
	s := quiet()
	s.LoadTimeout = 200 * time.Millisecond
	cfg := stores.Config{Store: segspec.Postgres, DSN: "postgres://u@" + addr + "/db?sslmode=disable", Settings: s}
	start := time.Now()
	_, err := stores.Open(context.Background(), cfg) // no deadline of the caller's
	require.Error(t, err)
	assert.Less(t, time.Since(start), 2*time.Second, "gave up by itself: %v", err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
