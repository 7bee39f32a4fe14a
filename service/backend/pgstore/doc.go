// Package pgstore keeps segment mode's leaf_alloc table in PostgreSQL,
// through a github.com/jackc/pgx/v5 connection pool. Several vesta-go
// instances may share one database: each Alloc is one atomic
// UPDATE ... RETURNING, so the ranges they receive are disjoint.
//
// A DSN may name a primary and its standbys; the pool reconnects to
// whichever server accepts writes after a failover. Since a range the old
// primary confirmed must survive on the new one, a Store refuses (at Open,
// on every new connection and before every allocation) a standby, and —
// when the DSN names several servers — a primary that does not commit
// synchronously to a standby, unless Options.AllowAsyncFailover accepts
// the risk (docs/segment.md, "PostgreSQL failover").
package pgstore
