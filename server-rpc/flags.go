package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/rpcapp"
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

// limits are the TCP server's limits from the flags; rpcapp.Run adds
// maxConnsPerIP from the configuration.
func (f *flags) limits() rpcapp.Limits {
	return rpcapp.Limits{Server: rpcserver.Options{
		MaxConns: f.maxConns, MaxMessageBytes: f.maxMessageBytes,
		FirstByteTimeout: f.firstByte, IdleTimeout: f.idle, MessageTimeout: f.message, WriteTimeout: f.write,
	}, ShutdownTimeout: f.shutdownTimeout}
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
