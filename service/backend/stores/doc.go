// Package stores opens segment mode as configured: the database store of
// the configured kind (an SQLite file, the default, or PostgreSQL), its
// table and the tags to create at start, and a segment.Generator on it.
//
// It is apart from package segment so that the generator and its Store
// contract link no database driver: the drivers (pgstore, sqlitestore)
// implement segstore.Store, and this package is where a program chooses
// between them.
package stores
