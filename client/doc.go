// Package client is the Go client of the vesta-go central server
// (server-rpc). It returns an intf.IdService and an intf.SegmentService (segment mode: NextIds), so code written
// against the embedded service or segment.Generator runs unchanged against
// a server.
//
// New(addrs, opts...) talks net/rpc over TCP to one or more servers:
//   - addresses are tried in the order given: the first healthy one takes
//     the calls, the next ones are fail-overs;
//   - each address has a pool of connections (WithPoolSize) used round
//     robin; net/rpc multiplexes concurrent calls on each;
//   - every call ends by the sooner of its context's deadline and the call
//     timeout (WithCallTimeout, default 2s), whatever the server does: a
//     send bounded by the caller's deadline, and a connection whose send
//     got stuck is closed and redialled; the remaining time travels with
//     the call so the server gives up too;
//   - a server that gives no answer, cannot issue, or sends nothing for a
//     call that gave it a fair time (100ms, or the call timeout if less)
//     is marked down; calls go to the next address, and a background probe
//     with gRPC-style back-off (WithBackoff, ×1.6, ±20%) brings it back.
//     One outage counts once however many calls it fails. When no address
//     that is up can serve, the down ones are tried as a last resort, so a
//     restarted server is used at once;
//   - when no address can serve, the error wraps intf.ErrUnavailable and
//     gives each address's error in this call;
//   - errors the server returns (bad arguments, ...) are not fail-over
//     triggers: they come back as is, testable with errors.Is against the
//     intf sentinels and errors.As with *intf.FieldError. Only a server's
//     own trouble (ErrClosed, ErrUnavailable, ErrNotPersisted,
//     ErrClockBehind: it is closing or cannot issue safely) fails over.
//     Segment calls (NextIds) go on to the next server when one cannot
//     serve the tag now (its buffers ran dry while its database is down),
//     without marking it down; an unknown tag is returned as is.
//
// WithSegmentRanges serves segment IDs (NextSegmentId, NextIds) from whole
// ranges the client takes from the servers (IdService.SegmentRange) and
// holds itself: a current and a spare range per tag, the same lock-free
// double buffer as the embedded generator (one atomic add per ID), the
// spare loaded in the background, the range size growing while ranges go
// fast, loads failing over between servers. Opt-in: a client's unused
// ranges are gaps when it exits, and IDs increase per client.
//
// WithBuffer keeps a stock of IDs fetched with GenIds and serves GenId from
// it, refilled in the background when below half. The trade-off: an ID from
// the buffer carries the time the server issued it, not the time GenId
// returned it (seconds or more earlier under light load), so IDs are not
// ordered by GenId call time; and IDs still in the buffer when the client
// exits are never used (harmless gaps).
//
// It links no third-party module, only the standard library and the
// project's own light packages (rpcapi, intf, internal/access for token
// checks, service/segment/segbuf for ranges, service/ctxtime): the go-plugin host, which starts server-rpc as a plugin process, is package
// server-rpc/rpcplugin, apart so that a plain RPC client does not carry go-plugin,
// gRPC and their dependencies. Both use the same call code (rpcapi.Conn).
package client
