package pluginapp

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/config"
)

// tcpOnly are the flags of the TCP server alone: plugin mode talks to its
// host over go-plugin's own connection, with go-plugin's limits.
var tcpOnly = []string{"listen", "max-conns", "max-conns-per-ip", "max-message-bytes",
	"first-byte-timeout", "idle-timeout", "message-timeout", "write-timeout", "shutdown-timeout"}

// Check refuses, in plugin mode, what would be silently ignored: a TCP
// server flag given on the command line (keys from a config file or the
// environment, which a TCP server may share, are left alone), and
// adminListen.
func Check(cfg config.Config, fs *pflag.FlagSet) error {
	for _, name := range tcpOnly {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return fmt.Errorf("--%s is for the TCP server: with --plugin the host talks to this process over go-plugin's own connection, so --%s would be ignored; remove one of them: %w",
				name, name, intf.ErrInvalidArgument)
		}
	}
	if cfg.AdminListen != "" {
		return fmt.Errorf("config key %s %q: plugin mode has no admin listener (its host sees the calls); unset it: %w",
			config.KeyAdminListen, cfg.AdminListen, intf.ErrInvalidArgument)
	}
	return nil
}
