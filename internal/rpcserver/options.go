package rpcserver

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/serverdefaults"
)

// Defaults for the zero fields of Options: the servers' defaults
// (internal/serverdefaults), which server-rpc's configuration applies too.
const (
	DefaultMaxConns      = serverdefaults.MaxConns
	DefaultMaxConnsPerIP = serverdefaults.MaxConnsPerIP
	// DefaultMaxCallsPerConn bounds one connection's calls in flight.
	DefaultMaxCallsPerConn = serverdefaults.MaxCallsPerConn
	// DefaultMaxMessageBytes bounds one gob message the server reads.
	// Real requests are a few hundred bytes (a type definition, a header,
	// the arguments); replies, the big messages, are written, not read.
	DefaultMaxMessageBytes = serverdefaults.MaxMessageBytes
	// DefaultMaxTypeDefs and DefaultMaxTypeDefBytes bound the gob type
	// definitions of one connection. A client calling every method sends
	// 9, in 579 bytes.
	DefaultMaxTypeDefs      = serverdefaults.MaxTypeDefs
	DefaultMaxTypeDefBytes  = serverdefaults.MaxTypeDefBytes
	DefaultFirstByteTimeout = serverdefaults.FirstByteTimeout
	// DefaultIdleTimeout is long: closing an idle connection only costs a
	// pooled client a redial, and eviction (see Options.MaxConns) already
	// frees idle slots when the server is full.
	DefaultIdleTimeout    = serverdefaults.IdleTimeout
	DefaultMessageTimeout = serverdefaults.MessageTimeout
	DefaultWriteTimeout   = serverdefaults.WriteTimeout
)

// MinMessageBytes is the least Options.MaxMessageBytes: below it even the
// type definitions a client sends with its first call would be refused.
const MinMessageBytes = serverdefaults.MinMessageBytes

// Options configure a Server. Zero fields take the Default values; negative
// ones are refused by New.
type Options struct {
	// MaxConns is the most connections served at once. A newcomer over it
	// takes the place of the connection that has waited longest for its
	// next call (it is closed after answering its calls in flight: a
	// pooled client redials); when every connection is reading a call, the
	// newcomer is closed at once with a warning (one a second at most).
	MaxConns int
	// MaxConnsPerIP is the most connections from one remote IP address;
	// more are closed at once with a warning. Clients behind one NAT
	// share it.
	MaxConnsPerIP int
	// MaxCallsPerConn is the most calls of one connection in flight (being
	// served or waiting for their reply to be written): at it the
	// connection is not read until a reply is written. Until a call of it
	// presents a valid token (with an auth file), a connection has one call
	// in flight at most, whatever it pipelines.
	MaxCallsPerConn int
	// MaxMessageBytes is the largest gob message read; a connection
	// sending a bigger one is closed before the message is read (gob alone
	// would accept 8 GB). At least MinMessageBytes.
	MaxMessageBytes int
	// MaxTypeDefs and MaxTypeDefBytes bound the gob type definitions one
	// connection sends (each new argument type is defined once, before
	// its first call), which its decoder keeps as long as it is open: a
	// connection sending more definitions, or more bytes of them, is
	// closed before the next is read. A gob type or value using the
	// interface type, which could define types inside a value, closes it
	// too: no argument type has one.
	MaxTypeDefs, MaxTypeDefBytes int
	// FirstByteTimeout is how long a new connection may send nothing.
	FirstByteTimeout time.Duration
	// IdleTimeout is how long a connection may wait between calls.
	IdleTimeout time.Duration
	// MessageTimeout is how long a call may take to arrive once its first
	// byte has: a slow writer is closed after it.
	MessageTimeout time.Duration
	// WriteTimeout bounds the writing of one reply, so that a client that
	// never reads cannot hold the server's goroutines and replies.
	WriteTimeout time.Duration
	// Logger receives warnings and, at debug level, connection events;
	// nil means slog.Default().
	Logger *slog.Logger
	// TLS, when set, serves TLS 1.2+ with its certificate (reloaded
	// without a restart) and, with a client CA, mutual TLS.
	TLS *tlsserve.Certs
}

// withDefaults checks o and fills its zero fields.
func (o Options) withDefaults() (Options, error) {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxConns", &o.MaxConns, DefaultMaxConns},
		{"MaxConnsPerIP", &o.MaxConnsPerIP, DefaultMaxConnsPerIP},
		{"MaxCallsPerConn", &o.MaxCallsPerConn, DefaultMaxCallsPerConn},
		{"MaxMessageBytes", &o.MaxMessageBytes, DefaultMaxMessageBytes},
		{"MaxTypeDefs", &o.MaxTypeDefs, DefaultMaxTypeDefs},
		{"MaxTypeDefBytes", &o.MaxTypeDefBytes, DefaultMaxTypeDefBytes},
	} {
		if *f.v < 0 {
			return o, fmt.Errorf("rpc server: %s %d < 0", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.MaxMessageBytes < MinMessageBytes {
		return o, fmt.Errorf("rpc server: MaxMessageBytes %d < %d", o.MaxMessageBytes, MinMessageBytes)
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"FirstByteTimeout", &o.FirstByteTimeout, DefaultFirstByteTimeout},
		{"IdleTimeout", &o.IdleTimeout, DefaultIdleTimeout},
		{"MessageTimeout", &o.MessageTimeout, DefaultMessageTimeout},
		{"WriteTimeout", &o.WriteTimeout, DefaultWriteTimeout},
	} {
		if *f.v < 0 {
			return o, fmt.Errorf("rpc server: %s %s < 0", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
