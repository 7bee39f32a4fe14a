package config

import (
	"time"

	"github.com/vesta-go/vesta/internal/serverdefaults"
)

// Keys of server-rpc's TCP server (docs/rpc.md): its connection limits.
const (
	KeyMaxCallsPerConn  = "maxCallsPerConn"
	KeyMaxMessageBytes  = "maxMessageBytes"
	KeyFirstByteTimeout = "firstByteTimeout"
	KeyIdleTimeout      = "idleTimeout"
	KeyMessageTimeout   = "messageTimeout"
	KeyWriteTimeout     = "writeTimeout"
)

// GroupRPC is server-rpc's TCP server: limits that only a net/rpc
// listener has (server-rest's HTTP server has its own). Only server-rpc
// registers it.
const GroupRPC Group = "rpc"

// maxRPCTimeout bounds the RPC server's timeouts: longer is a mistake
// (a unit), not a wish.
const maxRPCTimeout = 24 * time.Hour

// RPC are the limits of server-rpc's TCP server, for rpcserver.Options.
type RPC struct {
	MaxCallsPerConn, MaxMessageBytes int
	FirstByteTimeout                 time.Duration
	IdleTimeout                      time.Duration
	MessageTimeout                   time.Duration
	WriteTimeout                     time.Duration
}

// rpcKeys are the keys of GroupRPC.
func rpcKeys() []Key {
	return []Key{
		{Name: KeyMaxCallsPerConn, Flag: "max-calls-per-conn", Env: "VESTA_MAX_CALLS_PER_CONN", Group: GroupRPC,
			Default: num(serverdefaults.MaxCallsPerConn),
			Usage:   "the most calls of one connection in flight (1..65536): at it the connection is not read until a reply is written; a connection that has not yet presented a valid token has one"},
		{Name: KeyMaxMessageBytes, Flag: "max-message-bytes", Env: "VESTA_MAX_MESSAGE_BYTES", Group: GroupRPC,
			Default: num(serverdefaults.MaxMessageBytes),
			Usage:   "the largest message read (1024..1073741824); a connection sending a bigger one is closed"},
		{Name: KeyFirstByteTimeout, Flag: "first-byte-timeout", Env: "VESTA_FIRST_BYTE_TIMEOUT", Group: GroupRPC,
			Default: dur(serverdefaults.FirstByteTimeout),
			Usage:   "how long a new connection may send nothing"},
		{Name: KeyIdleTimeout, Flag: "idle-timeout", Env: "VESTA_IDLE_TIMEOUT", Group: GroupRPC, Default: dur(serverdefaults.IdleTimeout),
			Usage: "how long a connection may wait between calls"},
		{Name: KeyMessageTimeout, Flag: "message-timeout", Env: "VESTA_MESSAGE_TIMEOUT", Group: GroupRPC,
			Default: dur(serverdefaults.MessageTimeout),
			Usage:   "how long a call may take to arrive once its first byte has"},
		{Name: KeyWriteTimeout, Flag: "write-timeout", Env: "VESTA_WRITE_TIMEOUT", Group: GroupRPC, Default: dur(serverdefaults.WriteTimeout),
			Usage: "how long writing one reply may take"},
	}
}

// rpc reads the keys of GroupRPC.
func (r *reader) rpc() RPC {
	return RPC{
		MaxCallsPerConn:  int(r.int(KeyMaxCallsPerConn, "", serverdefaults.MaxCallsPerConn, 1, 65536)),
		MaxMessageBytes:  int(r.int(KeyMaxMessageBytes, "", serverdefaults.MaxMessageBytes, serverdefaults.MinMessageBytes, 1<<30)),
		FirstByteTimeout: r.duration(KeyFirstByteTimeout, serverdefaults.FirstByteTimeout, time.Millisecond, maxRPCTimeout),
		IdleTimeout:      r.duration(KeyIdleTimeout, serverdefaults.IdleTimeout, time.Millisecond, maxRPCTimeout),
		MessageTimeout:   r.duration(KeyMessageTimeout, serverdefaults.MessageTimeout, time.Millisecond, maxRPCTimeout),
		WriteTimeout:     r.duration(KeyWriteTimeout, serverdefaults.WriteTimeout, time.Millisecond, maxRPCTimeout),
	}
}
