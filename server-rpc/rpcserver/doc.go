// Package rpcserver serves an rpcapi.Receiver over TCP with net/rpc: a
// connection limit, connection logs at debug level, and a graceful
// Shutdown that stops accepting, stops reading new calls, lets the calls in
// flight answer (bounded by a context) and closes every connection.
//
// Callers own the listener and the ID service: Shutdown does not close the
// service, so a main closes it afterwards to store the high-water mark.
package rpcserver
