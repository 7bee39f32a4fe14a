// Package rpcadmin is server-rpc's admin listener: HTTP beside the
// net/rpc port, serving /metrics (Prometheus), /healthz and /readyz with
// the semantics and the core's metric names of server-rest
// (internal/coremetrics), plus the RPC door's own: calls by method and
// code, their latency, the connections. It is a package of its own so
// that rpcserver and rpcapi stay free of third-party modules: they only
// count (rpcserver.Stats) and tell (rpcapi.CallObserver).
//
// /metrics, and any handler mounted with HandleGuarded, needs the metrics
// scope when the guard requires tokens (an auth file), as on server-rest;
// /healthz and /readyz are open, for probes. With certificates the
// listener speaks only TLS.
package rpcadmin
