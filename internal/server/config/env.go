package config

import (
	"errors"
	"sort"
	"strings"
)

// envPrefix begins every environment variable of vesta-go.
const envPrefix = "VESTA_"

// OtherEnv lists the VESTA_* environment variables of vesta-go that are
// no configuration key, which the loader accepts: VESTA_GO_PLUGIN, the
// magic cookie go-plugin sets for server-rpc started as a plugin
// (pluginwire.Handshake; a test of server-rpc checks that they agree), and
// VESTA_TOKEN, the token the samples send (a shell that runs a sample and
// a server must not stop the server).
func OtherEnv() []string { return []string{"VESTA_GO_PLUGIN", "VESTA_TOKEN"} }

// checkEnv refuses every variable of environ ("NAME=value" pairs, as
// os.Environ) whose name begins with VESTA_, in any case, and is neither
// a key's variable nor in OtherEnv: a typo (VESTA_DATA_DRI) would
// otherwise leave the default in force. The keys of every group count: an
// environment shared by several programs holds the variables of keys a
// program does not read, which it ignores.
func checkEnv(environ []string) error {
	var known []string
	for _, k := range Keys() {
		known = append(known, k.Env)
		if k.Alias.Env != "" {
			known = append(known, k.Alias.Env)
		}
	}
	known = append(known, OtherEnv()...)
	var errs []*UnknownKeyError
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToUpper(name), envPrefix) || contains(known, name) {
			continue
		}
		errs = append(errs, unknownKey(name, Source{Layer: LayerEnv, Name: name}, known, true))
	}
	return joinUnknown(errs)
}

// joinUnknown returns the unknown keys sorted by name, as one error.
func joinUnknown(errs []*UnknownKeyError) error {
	sort.Slice(errs, func(i, j int) bool { return errs[i].Name < errs[j].Name })
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
