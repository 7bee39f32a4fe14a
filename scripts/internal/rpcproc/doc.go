// Package rpcproc is what the server-rpc measuring scripts (gobflood,
// rpcabuse) share: it runs the server-rpc binary as a child process on a
// free 127.0.0.1 port and stops it for its connection totals (Server),
// reads a process's resident set size from /proc (RSS), and measures a
// legitimate client.New client's GenId latency (Legit, Stats).
package rpcproc
