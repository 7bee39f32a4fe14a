// Package leasekit holds what the machine-id leases (service/etcdlease on
// etcd, service/pglease on PostgreSQL) share and does not depend on their
// coordinator: machine ranges and the choice of an id to claim, the fence
// arithmetic, the refusal of ids whose marks are too far ahead, and the
// lease state kept in the data dir across restarts.
package leasekit
