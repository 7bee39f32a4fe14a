package generatorsuite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/backend/pgtest"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// backend is one kind of store the suite runs against.
type backend struct {
	name string
	// newDB makes an empty database with the table.
	newDB func(t testing.TB) database
	// outage makes the database unreachable for st until end is called.
	outage func(t testing.TB, st *segtest.Store) (end func())
}

// database is one test's database.
type database struct {
	// open returns a new store on it (a new pool: another instance).
	open func(t testing.TB) segstore.Store
	// exec runs SQL on it directly, as an operator would.
	exec func(t testing.TB, query string, args ...any)
}

func backends() []backend {
	return []backend{
		{name: "sqlite", newDB: newSQLiteDB, outage: func(_ testing.TB, st *segtest.Store) func() {
			st.SetDown(true)
			return func() { st.SetDown(false) }
		}},
		{name: "postgres", newDB: newPostgresDB, outage: postgresOutage},
	}
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func initStore(t testing.TB, st segstore.Store, err error) segstore.Store {
	t.Helper()
	require.NoError(t, err)
	require.NoError(t, st.Init(context.Background()))
	return st
}

func newSQLiteDB(t testing.TB) database {
	path := filepath.Join(t.TempDir(), sqlitestore.FileName)
	return database{
		open: func(t testing.TB) segstore.Store {
			st, err := sqlitestore.Open(context.Background(), path)
			return initStore(t, st, err)
		},
		exec: func(t testing.TB, query string, args ...any) {
			db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(query, args...)
			require.NoError(t, err)
		},
	}
}

func newPostgresDB(t testing.TB) database {
	srv := pgtest.Shared(t)
	dsn, err := srv.NewSchema(context.Background())
	require.NoError(t, err)
	return database{
		open: func(t testing.TB) segstore.Store {
			st, err := pgstore.Open(context.Background(), dsn)
			return initStore(t, st, err)
		},
		exec: func(t testing.TB, query string, args ...any) {
			conn, err := pgx.Connect(context.Background(), dsn)
			require.NoError(t, err)
			defer conn.Close(context.Background())
			_, err = conn.Exec(context.Background(), query, args...)
			require.NoError(t, err)
		},
	}
}

// postgresOutage stops the shared server; end (or the test's cleanup)
// starts it again.
func postgresOutage(t testing.TB, _ *segtest.Store) func() {
	srv := pgtest.Shared(t)
	require.NoError(t, srv.Stop(context.Background()))
	stopped := true
	end := func() {
		if stopped {
			stopped = false
			require.NoError(t, srv.Restart(context.Background()))
		}
	}
	t.Cleanup(end)
	return end
}
