// Package serverdefaults is the one definition of the servers' defaults:
// the configuration (internal/server/config) applies them to its keys and writes
// them into --help and docs/configuration.md, and the libraries
// (restserver, rpcserver) apply the same ones to their zero options, so a
// library user and the commands get the same server. It imports nothing,
// so that config needs no server and rpcserver no configuration.
package serverdefaults

import "time"

// Both servers (the configuration's server group).
const (
	// MaxBatch caps one batch request (maxBatch); intf.MaxBatch is the
	// most it may be set to.
	MaxBatch = 10_000
	// CallTimeout bounds an ID or segment call on the server
	// (callTimeout). A healthy call waits at most one time unit (a second,
	// max-peak) for the sequence to refill, and a segment call at most one
	// range load; 5 s is several times that, yet below ShutdownTimeout and
	// in the range of the clients' own deadlines (the Go client's is 2 s),
	// so a stuck call is ended long before anyone would wait on it.
	CallTimeout = 5 * time.Second
	// MaxConnsPerIP caps a server's TCP connections from one remote IP
	// (maxConnsPerIP).
	MaxConnsPerIP = 64
	// MaxConns caps the connections of a server's port (maxConns 0),
	// lowered when the file descriptor limit is lower; AdminMaxConns
	// those of server-rpc's admin listener (scrapers and probes).
	MaxConns      = 1024
	AdminMaxConns = 64
	// ReservedFiles are the file descriptors kept from the listeners for
	// the service's own: the data dir and its mark, the reloaded files,
	// the lease's and the segment store's connections, the log.
	ReservedFiles = 128
	// ShutdownTimeout bounds the wait for the calls in flight on
	// SIGINT/SIGTERM (shutdownTimeout): three call timeouts, and with the
	// service's close well inside Kubernetes' default 30 s grace period.
	ShutdownTimeout = 15 * time.Second
	// SegmentMaxRange caps one range handed out whole (segmentMaxRange;
	// intf.MaxRange is the most it may be set to); the Go client holds
	// ranges of up to this size by default (client.WithSegmentRanges).
	SegmentMaxRange = 10_000_000
)

// The RPC server's connection limits (rpcserver.Options; the
// configuration's rpc group).
const (
	// MaxCallsPerConn bounds the calls of one connection being served or
	// waiting to be answered: every call read runs on a goroutine of its
	// own, so without it a client that pipelines calls and never reads
	// the replies grows the server without limit. A pooled client sends
	// far fewer at once.
	MaxCallsPerConn = 256
	// MaxMessageBytes bounds one gob message the server reads. Real
	// requests are a few hundred bytes (a type definition, a header, the
	// arguments); replies, the big messages, are written, not read.
	MaxMessageBytes = 64 << 10
	// MinMessageBytes is the least MaxMessageBytes may be: below it even
	// the type definitions a client sends with its first call would be
	// refused.
	MinMessageBytes = 1024
	// MaxTypeDefs and MaxTypeDefBytes bound the gob type definitions one
	// connection sends, which its decoder keeps for the connection's
	// life. A client calling every method defines 9 types in 579 bytes
	// (net/rpc's request header and each method's arguments): the bounds
	// leave it three times the types and fourteen times the bytes, and
	// keep a connection's types to a few hundred KB of the server's heap.
	MaxTypeDefs      = 32
	MaxTypeDefBytes  = 8 << 10
	FirstByteTimeout = 10 * time.Second
	// IdleTimeout is long: closing an idle connection only costs a pooled
	// client a redial, and eviction (MaxConns) already frees idle slots
	// when the server is full.
	IdleTimeout    = 5 * time.Minute
	MessageTimeout = 10 * time.Second
	WriteTimeout   = 10 * time.Second
)
