// Package segstore is the storage contract of segment mode: the Store
// interface the generator (package segment) allocates ranges through, the
// TagInfo row, the store errors, and the SQL both database stores share.
//
// The table is Leaf's:
//
//	leaf_alloc(biz_tag VARCHAR(128) PRIMARY KEY, max_id BIGINT, step INT,
//	           description VARCHAR(256), update_time TIMESTAMP)
//
// max_id is the next ID no generator holds yet: every ID below it has been
// handed out (or skipped). Allocating a range of step IDs advances max_id by
// step in one statement and returns the new value; the range is
// [new max_id - step, new max_id).
//
// It depends on the standard library and intf only, so a store
// implementation does not pull in the generator.
package segstore
