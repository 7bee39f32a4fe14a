// Package pglease leases Vesta machine ids (0..1023) from PostgreSQL, for
// teams that run it and no etcd — Vesta's database machine-id provider and
// Baidu UidGenerator's WORKER_NODE, done safely: it is the PostgreSQL
// backend of the lease engine etcdlease uses too (claim, renew, verify,
// fence, marks, resume from the data dir), so it implements
// service.MachineLease with the same rules.
//
// A claim is a row of Options.Table (default vesta_machines, created when
// missing) carrying a random fencing token: one statement inserts the row
// of a free id, or takes over one whose expires_at < now() — the
// database's clock decides expiry, and row locks let one of two claims
// win. Every later write names the token. The marks live apart, in
// <table>_marks, which nothing deletes (and in the row's mark_ms, for
// earlier versions). A DSN naming several servers must replicate
// synchronously unless Options.AllowAsyncFailover (service/internal/pgrepl,
// the segment store's check). See docs/operations.md.
package pglease
