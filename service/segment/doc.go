// Package segment is vesta-go's second kind of ID: segment mode, after
// Meituan Leaf's "Leaf-segment". It issues short, dense, strictly
// increasing numbers per business tag (order numbers, invoice numbers) from
// ranges ("segments") that a database hands out, in contrast to the
// 64-bit time-based IDs of package service.
//
// A Generator keeps two buffers per tag (service/segment/segbuf). An ID from the
// current range is one atomic add and a bounds check, with no lock; a batch
// takes whole runs at once. When 10% of the current range is used, the
// next range is loaded in the background (one load per tag at a time), so
// a request rarely waits for the database. The
// range size adapts like Leaf's: if the last range lasted under 15 minutes
// the step doubles (up to Settings.MaxStep), 15 to 30 minutes keeps it, over
// 30 minutes halves it, never below the tag's step in the database. The tag
// list is reread every Settings.RefreshInterval (60 s), and when a request
// names a tag the Generator does not know (at most once per
// Settings.MissRefreshInterval, 1 s), so that a new tag is served at once.
//
// When the database is down the Generator keeps serving from its buffers;
// once both are used up it fails fast with an error matching
// intf.ErrUnavailable and recovers by itself when a later load succeeds. It
// never issues an ID twice: each range belongs to the one Alloc that
// advanced max_id past it, and a range below one already held is refused.
//
// Storage is a segstore.Store: pgstore (PostgreSQL) or sqlitestore (an embedded
// SQLite file, the default). This package links neither driver: package
// stores opens the configured one and builds the Generator on it.
package segment
