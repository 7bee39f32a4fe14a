package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/service"
)

// Defaults of the keys only the loader reads; the other keys' defaults are
// the libraries' constants (service, intf, lease, segspec) and the
// servers' (internal/serverdefaults, which restserver and rpcserver apply
// to their zero options too: one definition each).
const (
	// DefaultMaxBatch is the default cap on one batch request.
	DefaultMaxBatch  = serverdefaults.MaxBatch
	DefaultLogLevel  = "info"
	DefaultLogFormat = "text"
	// DefaultCallTimeout bounds an ID or segment call on the server
	// (serverdefaults.CallTimeout says why 5 s).
	DefaultCallTimeout = serverdefaults.CallTimeout
	// DefaultMaxConnsPerIP is the servers' cap on TCP connections from one
	// remote IP.
	DefaultMaxConnsPerIP = serverdefaults.MaxConnsPerIP
	// DefaultShutdownTimeout bounds a server's wait for the calls in
	// flight on SIGINT/SIGTERM.
	DefaultShutdownTimeout = serverdefaults.ShutdownTimeout
)

// serviceDefaults are the defaults service.New applies to zero Settings
// fields, which the service keys take (TestServiceDefaultsResolve checks
// that this never fails).
var serviceDefaults, serviceDefaultsErr = service.Settings{NoDataDir: true}.WithDefaults()

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
	// Usage replaces, in this program's --help, the text of the keys
	// named, where the table's text (Key.Usage, written for the servers)
	// says what this program does not do: vesta-segment's dataDir holds
	// segments.db, no high-water mark.
	Usage map[string]string
	// FileOnly are keys the program reads from the file and the
	// environment, so that a configuration shared with the servers means
	// the same to it, but takes no flag for and so does not list in
	// --help: on its command line they could only stop it
	// (vesta-segment's noDataDir, which turns segment mode off).
	FileOnly []string
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
