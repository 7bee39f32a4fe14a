// Package rpcapi is the net/rpc face of an intf.IdService (and of an
// intf.SegmentService, segment mode), written once and used by every RPC
// door: the TCP server (server-rpc), the go-plugin plugin (server-rpc
// --plugin) and their clients (package client, and rpcplugin.Launch). It
// links no third-party module: besides the standard library it imports
// intf, internal/access (the guard a Receiver may check callers with) and
// service/ctxtime (call deadlines).
//
// It holds:
//   - the wire types (GenIdArgs, GenIdReply, ..., SegmentRangeArgs), the
//     method names (ServiceName, Methods) and the error code that carries
//     an error across the wire (Error, Code);
//   - Receiver, the net/rpc receiver: it translates calls to
//     intf.IdService and intf.SegmentService calls within the configured
//     batch and range caps and the call's deadline, checks each call's
//     token, scope and quota when given a guard (WithGuard), and tells a
//     CallObserver of every call (WithObserver: server-rpc's metrics);
//     registered as ServiceName ("IdService") on TCP and as
//     go-plugin's "Plugin" inside a plugin;
//   - Conn, the client call code: an intf.IdService and intf.SegmentService
//     over one *rpc.Client (NewNetConn: over a net.Conn, with every send
//     bounded by its caller's deadline) that enforces the caller's
//     context, sends the remaining time to the server, and turns a reply's
//     Error back into an error that matches the intf sentinels under
//     errors.Is, and *intf.FieldError and *intf.TagError under errors.As;
//   - Bounded, which cuts a caller's string before it is quoted in an
//     error or a log.
//
// The go-plugin pair (package server-rpc/rpcplugin) is built from the same
// Receiver and Conn. docs/rpc.md describes every method, its types and error codes.
package rpcapi
