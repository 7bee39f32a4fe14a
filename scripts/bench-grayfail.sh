#!/bin/sh
# The RPC client under gray failure: real server-rpc processes
# on 127.0.0.1 stopped with SIGSTOP, restarted and killed while callers
# call; prints each figure next to its target. Takes about a minute.
set -eu
cd "$(dirname "$0")/.."
exec go run ./scripts/grayfail/cmd "$@"
