// Package pgstore keeps segment mode's leaf_alloc table in PostgreSQL,
// through a github.com/jackc/pgx/v5 connection pool. Several vesta-go
// instances may share one database: each Alloc is one atomic
// UPDATE ... RETURNING, so the ranges they receive are disjoint.
package pgstore
