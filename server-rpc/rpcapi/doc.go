// Package rpcapi is the net/rpc face of an intf.IdService (and of an
// intf.SegmentService, segment mode), written once and used by every RPC
// door: the TCP server (server-rpc), the go-plugin plugin (server-rpc
// --plugin) and their clients (packages client and client/plugin). It
// imports only the standard library and intf.
//
// It holds three things:
//   - the wire types (GenIdArgs, GenIdReply, ..., SegmentArgs) and the
//     error code that carries an error across the wire (Error);
//   - Receiver, the net/rpc receiver: it only translates calls to
//     intf.IdService and intf.SegmentService calls, registered as
//     ServiceName ("IdService") on TCP and as go-plugin's "Plugin" inside a
//     plugin;
//   - Conn, the client call code: an intf.IdService and intf.SegmentService
//     over one *rpc.Client (NewNetConn: over a net.Conn, with every send
//     bounded by its caller's deadline) that enforces the caller's
//     context, sends the
//     remaining time to the server, and turns a reply's Error back into an
//     error that matches the intf sentinels under errors.Is, and
//     *intf.FieldError and *intf.TagError under errors.As.
//
// The go-plugin pair (package server-rpc/rpcplugin) is built from the same
// Receiver and Conn. docs/rpc.md describes every method, its types and error codes.
package rpcapi
