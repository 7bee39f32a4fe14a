package main

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcplugin"
	"github.com/vesta-go/vesta/server-rpc/rpcserver"
)

// DefaultShutdownTimeout is how long SIGINT/SIGTERM waits for calls in
// flight (--shutdown-timeout); the limits' defaults are rpcserver's.
const DefaultShutdownTimeout = 10 * time.Second

// flags are server-rpc's own flags, beyond the shared configuration.
type flags struct {
	plugin          bool
	maxConns        int
	maxConnsPerIP   int // from the configuration (maxConnsPerIP)
	maxMessageBytes int
	firstByte       time.Duration
	idle            time.Duration
	message         time.Duration
	write           time.Duration
	shutdownTimeout time.Duration
}

func (f *flags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.plugin, "plugin", false, "serve as a hashicorp/go-plugin plugin (genMethod 0 by default)")
	fs.IntVar(&f.maxConns, "max-conns", rpcserver.DefaultMaxConns,
		"the most TCP connections served at once; a newcomer evicts the longest-idle one, or is closed when none is idle")
	// --max-conns-per-ip is a configuration key (maxConnsPerIP), shared
	// with server-rest: runTCP takes it from the loaded configuration.
	f.maxConnsPerIP = rpcserver.DefaultMaxConnsPerIP
	fs.IntVar(&f.maxMessageBytes, "max-message-bytes", rpcserver.DefaultMaxMessageBytes,
		"the largest message read; a connection sending a bigger one is closed")
	fs.DurationVar(&f.firstByte, "first-byte-timeout", rpcserver.DefaultFirstByteTimeout, "how long a new connection may send nothing")
	fs.DurationVar(&f.idle, "idle-timeout", rpcserver.DefaultIdleTimeout, "how long a connection may wait between calls")
	fs.DurationVar(&f.message, "message-timeout", rpcserver.DefaultMessageTimeout,
		"how long a call may take to arrive once its first byte has")
	fs.DurationVar(&f.write, "write-timeout", rpcserver.DefaultWriteTimeout, "how long writing one reply may take")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout, "on SIGINT/SIGTERM, how long to wait for calls in flight")
}

func (f *flags) check() error {
	for _, n := range []struct {
		name  string
		v, lo int
	}{
		{"max-conns", f.maxConns, 1},
		{"max-conns-per-ip", f.maxConnsPerIP, 1},
		{"max-message-bytes", f.maxMessageBytes, rpcserver.MinMessageBytes},
	} {
		if n.v < n.lo {
			return fmt.Errorf("--%s %d: want at least %d", n.name, n.v, n.lo)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"first-byte-timeout", f.firstByte},
		{"idle-timeout", f.idle},
		{"message-timeout", f.message},
		{"write-timeout", f.write},
		{"shutdown-timeout", f.shutdownTimeout},
	} {
		if d.v <= 0 {
			return fmt.Errorf("--%s %s: want more than 0", d.name, d.v)
		}
	}
	return nil
}

// options are the TCP server's limits from the flags.
func (f *flags) options(log *slog.Logger) rpcserver.Options {
	return rpcserver.Options{
		MaxConns: f.maxConns, MaxConnsPerIP: f.maxConnsPerIP, MaxMessageBytes: f.maxMessageBytes,
		FirstByteTimeout: f.firstByte, IdleTimeout: f.idle, MessageTimeout: f.message, WriteTimeout: f.write,
		Logger: log,
	}
}

// tcpOnly are the flags of the TCP server alone: plugin mode talks to its
// host over go-plugin's own connection, with go-plugin's limits.
var tcpOnly = []string{"listen", "max-conns", "max-conns-per-ip", "max-message-bytes",
	"first-byte-timeout", "idle-timeout", "message-timeout", "write-timeout", "shutdown-timeout"}

// checkPluginFlags refuses, in plugin mode, a TCP server flag given on the
// command line: it would be silently ignored. (Keys from a config file or
// the environment, which a TCP server may share, are left alone.)
func checkPluginFlags(fs *pflag.FlagSet) error {
	for _, name := range tcpOnly {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return fmt.Errorf("--%s is for the TCP server: with --plugin the host talks to this process over go-plugin's own connection, so --%s would be ignored; remove one of them: %w",
				name, name, intf.ErrInvalidArgument)
		}
	}
	return nil
}

// pluginMode tells, before the flags are parsed, whether this run is a
// plugin: the per-program defaults (genMethod) are fixed before parsing.
// The handshake cookie in the environment means a go-plugin host started
// us.
func pluginMode(args []string) bool {
	if os.Getenv(rpcplugin.Handshake.MagicCookieKey) == rpcplugin.Handshake.MagicCookieValue {
		return true
	}
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "--") || name != "plugin" {
			continue
		}
		on = true
		if hasValue {
			on, _ = strconv.ParseBool(value)
		}
	}
	return on
}
