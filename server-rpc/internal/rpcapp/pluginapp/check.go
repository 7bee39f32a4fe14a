package pluginapp

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
)

// tcpOnly tells whether k is a key of the TCP server alone: plugin mode
// talks to its host over go-plugin's own connection, with go-plugin's
// limits and its automatic mutual TLS, which admits only the host that
// started the plugin — so the listener, its limits, TLS, tokens and
// quotas do not apply.
func tcpOnly(k config.Key) bool {
	switch k.Name {
	case config.KeyListen, config.KeyMaxConnsPerIP, config.KeyMaxConns, config.KeyShutdownTimeout:
		return true
	}
	return k.Group == config.GroupRPC || k.Group == config.GroupSecurity
}

// Check refuses, in plugin mode, what would be silently ignored: a TCP
// server key given as a flag on the command line, and adminListen however
// it is set. The TCP server's keys from a config file or the environment,
// which a TCP server may share, are not refused: WarnIgnored says they are
// ignored.
func Check(cfg config.Config, fs *pflag.FlagSet) error {
	for _, k := range config.Keys() {
		if f := fs.Lookup(k.Flag); tcpOnly(k) && f != nil && f.Changed {
			return fmt.Errorf("--%s is for the TCP server (key %s): with --plugin the host talks to this process over go-plugin's own connection, with its own mutual TLS, so --%s would be ignored; remove one of them: %w",
				k.Flag, k.Name, k.Flag, intf.ErrInvalidArgument)
		}
	}
	if cfg.AdminListen != "" {
		return fmt.Errorf("config key %s %q: plugin mode has no admin listener (its host sees the calls); unset it: %w",
			config.KeyAdminListen, cfg.AdminListen, intf.ErrInvalidArgument)
	}
	return nil
}

// warnIgnored warns once that the security keys cfg sets (from a config
// file or the environment: Check refused the flags) are ignored.
func warnIgnored(log *slog.Logger, cfg config.Config) {
	var set []string
	sec := cfg.Security
	for _, k := range []struct {
		name string
		on   bool
	}{
		{config.KeyTLSCert, sec.TLSCert != ""}, {config.KeyTLSClientCA, sec.TLSClientCA != ""},
		{config.KeyAuthFile, sec.AuthFile != ""}, {config.KeyRateLimit, sec.RateLimit > 0},
	} {
		if k.on {
			set = append(set, k.name)
		}
	}
	if len(set) > 0 {
		log.Warn("vesta plugin: "+strings.Join(set, ", ")+" (from the config file or the environment, which a TCP server may share) are for the TCP server and are ignored: go-plugin's automatic mutual TLS admits only the host that started the plugin",
			"keys", set)
	}
}
