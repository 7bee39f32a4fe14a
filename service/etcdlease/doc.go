// Package etcdlease leases Vesta machine ids (0..1023) from etcd, so that
// two live generators never share one: it is the etcd backend of the lease
// engine pglease uses too, and implements service.MachineLease.
//
// A claim is an etcd lease with the id's key created under it by a
// create-if-absent transaction, which also reads the id's mark and reports
// the node's clock. The lease is renewed with KeepAliveOnce every TTL/3
// (no write to etcd's history); each renewal keeps the id surely valid
// until t0 + TTL − FenceMargin(TTL), t0 read before the request was sent,
// and the mark is stored up to that validity right after it: one revision
// per node per renewal, and a node keeps issuing through an etcd outage
// until its validity ends. Every second the node reads that its key is
// still its lease's. The claim is saved in the data dir, so a restart
// resumes it, also while etcd is down. Keys, under Options.Prefix:
//
//	machines/<id>   the holder's node name, attached to its lease
//	marks/<id>      Unix ms no ID of <id> was issued above (no lease: it outlives holders)
//	claimed/<id>    the last node that claimed <id> (no lease): a claim finding it but no mark knows the mark was lost
//	clocks/<node>   the node's clock in Unix ms, attached to its lease
//
// and /vesta-ranges/<lease> (RangesKey), each fleet's prefix and range.
// Clocks are the service's (service.LeaseHolder.Now), so tests inject
// time through service.Settings.Clock. See docs/operations.md.
package etcdlease
