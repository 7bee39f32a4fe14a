// Command server-rpc is the vesta-go central server: the ID service over
// net/rpc on TCP (default :20880, genMethod 1), or, with --plugin, the same
// service as a hashicorp/go-plugin plugin (genMethod 0 by default, since it
// runs inside its host; logs as JSON lines on stderr for the host).
//
// It reads the configuration every vesta-go main reads (see
// docs/configuration.md: among them --max-conns-per-ip and --max-conns,
// the most TCP connections from one remote IP and in all (fitted to the
// file descriptor limit), --call-timeout, the bound of every call, and
// the TCP listener's limits, the rpc group, which only
// server-rpc reads). Its own settings, each a flag, a VESTA_* variable and
// a config-file key but --plugin:
//
//	--plugin               serve as a go-plugin plugin (also implied when the plugin handshake cookie is set)
//	--max-calls-per-conn N the most calls of one connection in flight (default 256)
//	--max-message-bytes N  the largest message read (default 65536)
//	--first-byte-timeout D how long a new connection may send nothing (default 10s)
//	--idle-timeout D       how long a connection may wait between calls (default 5m)
//	--message-timeout D    how long a call may take to arrive once its first byte has (default 10s)
//	--write-timeout D      how long writing one reply may take (default 10s)
//	--shutdown-timeout D   how long SIGINT/SIGTERM waits for calls in flight (default 15s), as server-rest's
//
// With --admin-listen host:port (key adminListen) the TCP server also
// serves /metrics, /healthz and /readyz over HTTP (package rpcadmin; see
// docs/rpc.md): the same readiness and core metrics as server-rest's, plus
// calls, errors and latency per RPC method and the connections.
//
// Both serve segment mode too (IdService.SegmentNextIds), opened from the
// configuration (segmentStore, segmentDSN, segmentTags) at start.
//
// On SIGINT or SIGTERM the TCP server stops accepting, answers the calls it
// has read, closes its connections, stores the time high-water mark and
// closes segment mode. See docs/rpc.md.
//
// This package only parses the flags and runs: the TCP server is built by
// internal/rpcapp, plugin mode by internal/rpcapp/pluginapp (beside this main).
package main
