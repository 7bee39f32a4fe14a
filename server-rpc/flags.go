package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/server-rpc/rpcapi"
	"github.com/vesta-go/vesta/server-rpc/rpcserver"
)

// flags are server-rpc's own flags, beyond the shared configuration.
type flags struct {
	plugin          bool
	maxConns        int
	shutdownTimeout time.Duration
}

func (f *flags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.plugin, "plugin", false, "serve as a hashicorp/go-plugin plugin (genMethod 0 by default)")
	fs.IntVar(&f.maxConns, "max-conns", rpcserver.DefaultMaxConns, "the most TCP connections served at once; more are closed")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, how long to wait for calls in flight")
}

func (f *flags) check() error {
	if f.maxConns < 1 {
		return fmt.Errorf("--max-conns %d: want at least 1", f.maxConns)
	}
	if f.shutdownTimeout <= 0 {
		return fmt.Errorf("--shutdown-timeout %s: want more than 0", f.shutdownTimeout)
	}
	return nil
}

// pluginMode tells, before the flags are parsed, whether this run is a
// plugin: the per-program defaults (genMethod) are fixed before parsing.
// The handshake cookie in the environment means a go-plugin host started
// us.
func pluginMode(args []string) bool {
	if os.Getenv(rpcapi.Handshake.MagicCookieKey) == rpcapi.Handshake.MagicCookieValue {
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
