// Package etcdlease leases Vesta machine ids (0..1023) from etcd, so that
// two live generators never share one: it implements service.MachineLease
// on go.etcd.io/etcd/client/v3.
//
// A node grants an etcd lease, checks its clock against the other live
// nodes' reports, and claims a random free id of its range (the one it had
// first) with one transaction: create prefix/machines/<id> under the lease
// if absent, else list the ids held for the next try. It reads the id's
// time high-water mark (prefix/marks/<id>, left by earlier holders) and
// hands both to the service, which waits past the mark or refuses to run.
//
// etcd is a weak dependency. The lease (default TTL 1 minute) is renewed
// with keep-alives, which write nothing; the mark is stored up to the
// lease's validity after each renewal, with the clock report in the same
// transaction: one revision per node per renewal, and a node keeps issuing
// through an etcd outage until its validity ends. The lease and id are
// saved in the data dir (service.LeaseHolder.SaveLeaseState), so a node
// restarted on it resumes them without a claim — also while etcd is down,
// within the validity saved.
//
// Fencing does not trust the client's background keep-alive: the lease is
// renewed with KeepAliveOnce every TTL/3, and each renewal that succeeds
// makes the id surely valid until t0 + TTL − FenceMargin(TTL), where t0 is
// the service clock read before the request was sent. etcd cannot expire
// the lease before t0 + TTL, so the service stops issuing before another
// node can be given the id. When the lease is known to be gone (revoked,
// expired, or the id's key taken), the node fences at once and claims an
// id again, preferring the one it had.
//
// Keys, under Options.Prefix (default /vesta):
//
//	machines/<id>   this holder's node name, attached to its lease
//	marks/<id>      Unix ms no ID of <id> was issued above (no lease: it outlives holders)
//	clocks/<node>   the node's clock in Unix ms, attached to its lease, refreshed every TTL/3
//
// and, outside the prefix, /vesta-ranges/<lease> (RangesKey): the prefix
// and Options.MachineRange of each node that sets one.
//
// The clock reports and the fencing read the service's clock
// (service.LeaseHolder.Now), so a test injects time through
// service.Settings.Clock. See docs/operations.md for deployment and the
// behaviour under each failure.
package etcdlease
