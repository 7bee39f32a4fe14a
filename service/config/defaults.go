package config

import (
	"strconv"
	"strings"
	"time"
)

// Defaults of the keys only the loader reads; the other keys' defaults are
// the libraries' constants (service, intf, etcdlease, stores).
const (
	// DefaultMaxBatch is the default cap on one batch request.
	DefaultMaxBatch  = 10_000
	DefaultLogLevel  = "info"
	DefaultLogFormat = "text"
	// DefaultCallTimeout bounds an ID or segment call on the server. A
	// healthy call waits at most one time unit (a second, max-peak) for
	// the sequence to refill, and a segment call at most one range load;
	// 5 s is several times that, yet below the servers' shutdown timeouts
	// and in the range of the clients' own deadlines (the Go client's is
	// 2 s), so a stuck call is ended long before anyone would wait on it.
	DefaultCallTimeout = 5 * time.Second
	// DefaultMaxConnsPerIP is the servers' cap on TCP connections from one
	// remote IP (rpcserver.DefaultMaxConnsPerIP too).
	DefaultMaxConnsPerIP = 64
)

// Defaults are the per-program defaults of the keys whose default varies
// by program: listen (GroupServer) and genMethod (GroupService).
type Defaults struct {
	Listen    string // e.g. ":8080"
	GenMethod int64  // e.g. intf.GenMethodREST
	// RPC says the program is Vesta's central server's counterpart
	// (server-rpc): it listens on Vesta's vesta.service.port (from
	// vesta-server.properties), else on vesta.port, when listen is not
	// set; the others on vesta.port only.
	RPC bool
}

// portProperties are the Vesta properties, in order, that give the
// program's port when listen is not set.
func (d Defaults) portProperties() []string {
	if d.RPC {
		return []string{VestaServicePort, VestaPort}
	}
	return []string{VestaPort}
}

// The default texts of Keys, written from the constants the loader and
// the libraries apply, so that --help, docs/configuration.md (a test
// checks it) and the behaviour cannot disagree.

func num(n int64) string { return strconv.FormatInt(n, 10) }

func boolean(b bool) string { return strconv.FormatBool(b) }

// dur writes d as a person would: 5m rather than Go's 5m0s.
func dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
