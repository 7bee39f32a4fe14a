// Package client is the Go client of the vesta-go central server
// (server-rpc) and of its go-plugin plugin. Both return an intf.IdService
// and an intf.SegmentService (segment mode: NextIds), so code written
// against the embedded service or segment.Generator runs unchanged against
// a server.
//
// New(addrs, opts...) talks net/rpc over TCP to one or more servers:
//   - addresses are tried in the order given: the first healthy one takes
//     the calls, the next ones are fail-overs;
//   - each address has a pool of connections (WithPoolSize) used round
//     robin; net/rpc multiplexes concurrent calls on each;
//   - a call's context bounds it: when ctx is done the call returns at once
//     with an error wrapping ctx.Err(), and the remaining time travels with
//     the call so the server gives up too;
//   - a broken connection is dropped and redialled once; a server that
//     cannot be reached or answers nothing is marked down with exponential
//     back-off per address (WithBackoff), the call fails over to the next
//     address, and a background health check brings it back;
//   - when no address can serve, the error wraps intf.ErrUnavailable;
//   - errors the server returns (bad arguments, ...) are not fail-over
//     triggers: they come back as is, testable with errors.Is against the
//     intf sentinels and errors.As with *intf.FieldError. Only a server's
//     own trouble (ErrClosed, ErrUnavailable, ErrNotPersisted,
//     ErrClockBehind: it is closing or cannot issue safely) fails over.
//     Segment calls (NextIds) go on to the next server when one cannot
//     serve the tag now (its buffers ran dry while its database is down),
//     without marking it down; an unknown tag is returned as is.
//
// WithBuffer keeps a stock of IDs fetched with GenIds and serves GenId from
// it, refilled in the background when below half. The trade-off: an ID from
// the buffer carries the time the server issued it, not the time GenId
// returned it (seconds or more earlier under light load), so IDs are not
// ordered by GenId call time; and IDs still in the buffer when the client
// exits are never used (harmless gaps).
//
// LaunchPlugin starts server-rpc as a plugin process and returns its
// IdService; the same call code (rpcapi.Conn) serves both.
package client
