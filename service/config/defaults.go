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
)

// Defaults are the per-program defaults of the keys whose default varies
// by program: listen (GroupServer) and genMethod (GroupService).
type Defaults struct {
	Listen    string // e.g. ":8080"
	GenMethod int64  // e.g. intf.GenMethodREST
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
