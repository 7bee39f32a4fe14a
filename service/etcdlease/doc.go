// Package etcdlease leases Vesta machine ids (0..1023) from etcd, so that
// two live generators never share one: it is the etcd backend of the lease
// engine pglease uses too, and implements service.MachineLease.
//
// A claim is an etcd lease with the id's key created under it if absent,
// renewed with KeepAliveOnce every TTL/3 (no write to etcd's history), each
// renewal followed by the mark up to its validity: one revision per node per
// renewal, and a node issues through an etcd outage until its validity ends.
// Every second it checks that its key is still its lease's. The claim saved
// in the data dir resumes after a restart, also while etcd is down. Keys,
// under Options.Prefix, and /vesta-ranges/<lease> (RangesKey):
//
//	machines/<id>   the holder's node name, attached to its lease
//	marks/<id>      Unix ms no ID of <id> was issued above (no lease: it outlives holders)
//	claimed/<id>    the last node that claimed <id> (no lease): a claim finding it but no mark knows the mark was lost
//	clocks/<node>   the node's clock in Unix ms, attached to its lease
//
// See docs/operations.md.
package etcdlease
