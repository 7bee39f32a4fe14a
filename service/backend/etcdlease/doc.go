// Package etcdlease leases Vesta machine ids (0..1023) from etcd, so that
// two live generators never share one: the etcd backend of the lease engine
// pglease shares; a Lease is a machineid.Lease.
//
// A claim is an etcd lease with the id's key created under it if absent,
// renewed by KeepAliveOnce every TTL/40 within 250 ms..1 s (no revision),
// its mark kept ahead of the validity and stored at most TTL/3 (20 s) apart
// with the clock report (one revision); a holder issues through an outage
// until its validity ends, and resumes its claim after a restart. Keys under Options.Prefix, and every
// node's range under /vesta-ranges/<lease> (RangesKey):
//
//	machines/<id>   the holder's node name, under its lease
//	marks/<id>      Unix ms no ID of <id> was issued above (no lease)
//	claimed/<id>    the last node that claimed <id> (no lease): a mark missing beside it was lost
//	clocks/<node>   the node's clock in Unix ms, under its lease
//	layout          the fleet's epoch, type, genMethod, version and largest lead (no lease)
//
// See docs/operations.md.
package etcdlease
