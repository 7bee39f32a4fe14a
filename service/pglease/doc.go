// Package pglease leases Vesta machine ids (0..1023) from a PostgreSQL
// table, for teams that run PostgreSQL and no etcd — Vesta's database
// machine-id provider and Baidu UidGenerator's WORKER_NODE, done safely:
// it implements service.MachineLease with the semantics of
// service/etcdlease (claim, renew, fence, marks, resume from the data
// dir).
//
// One row per claimed id, in Options.Table (default vesta_machines,
// created when missing):
//
//	prefix      text     the fleet (Options.Prefix); nodes sharing ids share it
//	machine     integer  the id, 0..1023
//	holder      text     the holder's node name (for operators)
//	token       bigint   the fencing token: new and random for every claim
//	expires_at  timestamptz  when the claim lapses, by the DATABASE clock
//	mark_ms     bigint   Unix ms no ID of the id was issued above; it outlives holders
//
// Expiry is decided by the database's now(), never by a node's clock. A
// claim is one statement: insert the row of a random free id of the range,
// or take it over when it has lapsed (expires_at < now()), with a new
// token — row locks make sure that of two claims only one succeeds — and
// when the id is held, list the live ids for the next try: O(1) expected
// round trips while the range is sparse. Every later write names the
// token: a renewal (expires_at = now() + TTL) or a mark store that changes
// no row means the id was taken over, and the node fences at once and
// claims again. A new holder starts above the mark the row keeps.
//
// The node renews every TTL/3 and fences itself TTL − FenceMargin(TTL)
// after the moment it SENT its last successful renewal, on its own
// monotonic clock: the database cannot let the claim lapse before
// now() + TTL, so a cut-off node stops before any other can take its id.
// A node keeps issuing through a database outage for up to that long.
//
// The claim (id, token, validity, mark) is saved in the data dir
// (service.LeaseHolder.SaveLeaseState): a node restarted on it resumes
// its id at once, and, while the database is unreachable, within the
// validity saved. A stop releases the id (expires_at = -infinity) and
// keeps its mark.
package pglease
