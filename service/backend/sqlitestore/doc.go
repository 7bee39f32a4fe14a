// Package sqlitestore keeps segment mode's leaf_alloc table in an embedded
// SQLite file, through modernc.org/sqlite (pure Go, no cgo) and
// database/sql.
//
// The file is opened in WAL mode with a busy timeout and full sync, and
// every Alloc runs in a BEGIN IMMEDIATE transaction, so several processes
// on one host may share the file: each waits for the write lock in turn and
// receives a disjoint range.
package sqlitestore
