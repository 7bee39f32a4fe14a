// Package rpcadmin is server-rpc's admin listener: HTTP beside the
// net/rpc port, serving the operations surface both servers share
// (internal/server/ops: health, readiness, metrics, the status page and their
// auth) over the core's metric names (internal/server/coremetrics) plus the RPC
// door's own: calls by method and code, their latency, the connections.
// It is a package of its own so that rpcserver and rpcapi stay free of
// third-party modules: they only count (rpcserver.Stats) and tell
// (rpcapi.CallObserver). With certificates the listener speaks only TLS.
package rpcadmin
