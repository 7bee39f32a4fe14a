package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Open connects to PostgreSQL; segment.New then serves IDs from the
// store's leaf_alloc table. Several servers may share the database: each
// allocation is one atomic UPDATE, so their ranges never overlap. Not run
// here: it needs a PostgreSQL server (the package's tests start one).
func ExampleOpen() {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, "postgres://vesta@db.example:5432/ids?sslmode=verify-full")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Init(ctx); err != nil { // creates leaf_alloc if missing
		fmt.Println(err)
		_ = st.Close()
		return
	}
	// The first server to start creates the tag; the others find it there.
	err = st.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 1, Step: 1000})
	if err != nil && !errors.Is(err, segstore.ErrTagExists) {
		fmt.Println(err)
		_ = st.Close()
		return
	}

	g, err := segment.New(ctx, segment.Settings{Store: st, Logger: slog.Default()})
	if err != nil {
		fmt.Println(err)
		_ = st.Close()
		return
	}
	defer g.Close() // closes the store too

	ids, err := g.NextIds(ctx, "order", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ids)
}

// ParseDSN checks a DSN — a URL or key=value pairs — without connecting,
// as the configuration loader does at start. Its errors never repeat the
// password.
func ExampleParseDSN() {
	cfg, err := pgstore.ParseDSN("postgres://vesta:secret@db.example:6543/ids?sslmode=disable")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, cfg.ConnConfig.User)

	cfg, err = pgstore.ParseDSN("host=127.0.0.1 port=5433 dbname=ids user=vesta")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, cfg.ConnConfig.User)

	_, err = pgstore.ParseDSN("postgres://vesta:secret@db.example:notaport/ids")
	fmt.Println(err) // the password is masked
	// Output:
	// db.example 6543 ids vesta
	// 127.0.0.1 5433 ids vesta
	// segment store postgres: cannot parse `postgres://vesta:xxxxx@db.example:notaport/ids`: invalid port
}

// Synchronous says whether a primary's commits wait for a standby:
// only then may a DSN name several servers (failover) without
// Options.AllowAsyncFailover.
func ExampleReplication_Synchronous() {
	for _, r := range []pgstore.Replication{
		{SynchronousCommit: "on", SynchronousStandbyNames: "FIRST 1 (standby1)"},
		{SynchronousCommit: "remote_write", SynchronousStandbyNames: "standby1"},
		{SynchronousCommit: "on", SynchronousStandbyNames: ""},
	} {
		fmt.Printf("%s, %q: %v\n", r.SynchronousCommit, r.SynchronousStandbyNames, r.Synchronous())
	}
	// Output:
	// on, "FIRST 1 (standby1)": true
	// remote_write, "standby1": false
	// on, "": false
}
