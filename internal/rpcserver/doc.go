// Package rpcserver serves an rpcapi.Receiver over TCP with net/rpc,
// hardened for a hostile network: a connection limit that evicts the
// longest-idle connection for a newcomer, a limit per remote IP, a bound
// on the size of a message read (checked from gob's byte count before gob
// allocates), deadlines for a connection's first byte, between calls, for
// reading one call and for writing one reply; counters of all of it
// (Stats); connection logs at debug level; and a graceful Shutdown that
// stops accepting, stops reading new calls, lets the calls in flight
// answer (bounded by a context) and closes every connection.
//
// Callers own the listener and the ID service: Shutdown does not close the
// service, so a main closes it afterwards to store the high-water mark.
package rpcserver
