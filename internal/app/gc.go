package app

import (
	"os"
	"runtime/debug"
)

// ServerGCPercent is the garbage collector's target (GOGC) of the servers
// when the environment does not set GOGC. A server's live heap is a few
// MB (Echo, Prometheus, the configuration), so with Go's default of 100
// it collects every few dozen milliseconds under load, for a garbage
// rate of ~1 KB per request: measured with wrk on server-rest /genid,
// GOGC=400 takes ~15% less CPU per request (docs/benchmarks.md) for a
// heap of ~5x the live one, tens of MB. Set GOGC (or GOMEMLIMIT, which
// deploy/k8s sets from the container's memory limit) to choose otherwise.
const ServerGCPercent = 400

// TuneGC sets the GC target to ServerGCPercent unless getenv (os.Getenv)
// gives GOGC, and returns the target in force.
func TuneGC(getenv func(string) string) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	if v := getenv("GOGC"); v != "" {
		p := debug.SetGCPercent(-1) // read it back without changing it
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(ServerGCPercent)
	return ServerGCPercent
}
