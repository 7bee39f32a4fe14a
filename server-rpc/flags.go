package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
)

// flags are server-rpc's own flags, beyond the configuration's keys (its
// TCP limits are keys too: the rpc group, docs/configuration.md). --plugin
// is no setting but the mode of the run, chosen before the configuration
// is read (pluginMode).
type flags struct {
	plugin bool
}

func (f *flags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.plugin, "plugin", false, "serve as a hashicorp/go-plugin plugin (genMethod 0 by default)")
}

// pluginMode tells, before the flags are parsed, whether this run is a
// plugin: the per-program defaults (genMethod) are fixed before parsing.
// The handshake cookie in the environment means a go-plugin host started
// us.
func pluginMode(args []string) bool {
	if os.Getenv(pluginwire.Handshake.MagicCookieKey) == pluginwire.Handshake.MagicCookieValue {
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
