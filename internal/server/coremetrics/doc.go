// Package coremetrics is what both servers say about the core on their
// /metrics and /readyz: the ID service's figures (service.Stats), segment
// mode's buffers, the TLS and guard counters, the build and readiness —
// under the same names, so that one dashboard and one set of alerts
// (deploy/) cover server-rest and server-rpc alike. Each server adds its
// own door's metrics (HTTP routes, RPC methods and connections) to the
// registry it passes to Register.
package coremetrics
