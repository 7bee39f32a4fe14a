// Package conformance holds the lease conformance suite: one set of
// cases run against every coordinator (etcd, PostgreSQL), most of them
// through real server-rest processes. It has no non-test code.
package conformance
