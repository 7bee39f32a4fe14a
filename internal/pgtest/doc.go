// Package pgtest starts a throw-away PostgreSQL server for tests and
// benchmarks (and scripts/soak): initdb into a temp directory, pg_ctl start on a free
// 127.0.0.1 port, one database per test. As root it runs the server as the
// postgres user, since initdb refuses to run as root.
package pgtest
