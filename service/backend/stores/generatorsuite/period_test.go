package generatorsuite_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/backend/pgtest"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// clockedDB is a database whose clock the test sets: open returns a new
// store (a node's) reading the period from it, set moves it.
type clockedDB struct {
	open func(t *testing.T) segstore.Store
	set  func(t *testing.T, now time.Time)
}

// sqliteClocked: SQLite reads the process's clock, which SetNow replaces.
func sqliteClocked(t *testing.T) clockedDB {
	path := filepath.Join(t.TempDir(), sqlitestore.FileName)
	var now atomic.Pointer[time.Time]
	return clockedDB{
		open: func(t *testing.T) segstore.Store {
			st, err := sqlitestore.Open(context.Background(), path)
			initStore(t, st, err)
			st.SetNow(func() time.Time { return *now.Load() })
			return st
		},
		set: func(_ *testing.T, t time.Time) { now.Store(&t) },
	}
}

// postgresClocked: the statement reads the database's clock from a table
// the test updates (pgstore.Options.NowSQL), in place of now().
func postgresClocked(t *testing.T) clockedDB {
	dsn, err := pgtest.Shared(t).NewSchema(context.Background())
	require.NoError(t, err)
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(context.Background(), `CREATE TABLE vesta_test_clock (t TIMESTAMPTZ NOT NULL); INSERT INTO vesta_test_clock VALUES (now())`)
	require.NoError(t, err)
	return clockedDB{
		open: func(t *testing.T) segstore.Store {
			st, err := pgstore.OpenOptions(context.Background(), dsn, pgstore.Options{NowSQL: "(SELECT t FROM vesta_test_clock)"})
			return initStore(t, st, err)
		},
		set: func(t *testing.T, now time.Time) {
			_, err := conn.Exec(context.Background(), `UPDATE vesta_test_clock SET t = $1`, now)
			require.NoError(t, err)
		},
	}
}

// Two nodes (two stores: two pools on PostgreSQL) serve a day tag under
// load while the database's clock, which the test drives, crosses
// midnight: every text is unique, the new day restarts at 1, and no
// number of the old day comes from a call made once the database's clock
// had passed midnight. Then a restarted node continues above, and the
// store's own errors. Run under -race.
func TestPeriodDayBoundaryTwoNodes(t *testing.T) {
	for name, newDB := range map[string]func(*testing.T) clockedDB{"sqlite": sqliteClocked, "postgres": postgresClocked} {
		t.Run(name, func(t *testing.T) { testPeriodDayBoundary(t, newDB(t)) })
	}
}

func testPeriodDayBoundary(t *testing.T, db clockedDB) {
	ctx := context.Background()
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	base := segtest.NewClock()
	base.Advance(midnight.Add(-300 * time.Millisecond).Sub(base.Now()))
	db.set(t, base.Now())

	var gens []*segment.Generator
	for i := range 2 {
		st := db.open(t)
		if i == 0 {
			ps, err := segstore.PeriodStoreOf(st)
			require.NoError(t, err)
			pt := segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 5}
			require.NoError(t, ps.CreatePeriodTag(ctx, pt))
			require.ErrorIs(t, ps.CreatePeriodTag(ctx, pt), segstore.ErrTagExists)
			tags, err := ps.PeriodTags(ctx)
			require.NoError(t, err)
			require.Equal(t, []segstore.PeriodTag{pt}, tags)
		}
		g, err := segment.New(ctx, segment.Settings{Store: st, Clock: base, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		gens = append(gens, g)
	}

	newDay := segtest.DayBoundary{Gens: gens, Tag: "order", Clock: base, Midnight: midnight,
		Step: 2 * time.Millisecond, After: 300 * time.Millisecond, NewDay: 100, Callers: 6,
		SetDB: func(now time.Time) { db.set(t, now) }}.Run(t)

	// A restarted node continues above everything issued.
	require.NoError(t, gens[0].Close())
	g, err := segment.New(ctx, segment.Settings{Store: db.open(t), Clock: base, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer g.Close()
	n, err := g.NextNumber(ctx, "order")
	require.NoError(t, err)
	for seq := range newDay {
		require.Greater(t, n.Seq, seq)
	}
}
