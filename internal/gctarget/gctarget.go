// Package gctarget sets the garbage collector's target (GOGC) of the
// servers. A server's live heap is a few MB (Echo, Prometheus, the
// configuration), so with Go's default of 100 it collects every few dozen
// milliseconds under load, for a garbage rate of ~1 KB per request:
// measured with wrk on server-rest /genid, GOGC=400 takes ~8% less CPU per
// request (docs/benchmarks.md, REST) for a heap of ~5x the live one, tens
// of MB. Set GOGC (or GOMEMLIMIT, which deploy/k8s sets from the
// container's memory limit) to choose otherwise.
package gctarget

import (
	"os"
	"runtime/debug"
)

// Server is the servers' GC target when the environment does not set GOGC.
const Server = 400

// Tune sets the GC target to Server unless getenv (os.Getenv when nil)
// gives GOGC, and returns the target in force.
func Tune(getenv func(string) string) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("GOGC") != "" {
		p := debug.SetGCPercent(-1) // read it back without changing it
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(Server)
	return Server
}
