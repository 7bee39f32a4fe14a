// Package pgtest starts throw-away PostgreSQL servers for tests and
// benchmarks (and scripts/soak): initdb into a temp directory, pg_ctl start on a free
// 127.0.0.1 port, one database per test; or a replicated Cluster, a primary
// with a standby made by pg_basebackup -R (StartCluster, NewCluster), for
// failover tests. As root it runs the servers as the postgres user, since
// initdb refuses to run as root.
package pgtest
