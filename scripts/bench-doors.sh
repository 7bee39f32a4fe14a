#!/usr/bin/env bash
# bench-doors.sh: reruns the measurements of the doors under abuse quoted
# in docs/benchmarks.md ("RPC under a hostile network", "Security") and
# docs/security.md, and prints the lines that carry the figures.
#
#   scripts/bench-doors.sh
#
# - A flood of idle connections from 20 loopback addresses × 60 on the
#   real server-rest and server-rpc (its RPC port and admin listener), each
#   started with a limit of 512 open files: what the servers closed, and a
#   legitimate client's success rate and p50/p99 beside it.
# - Four connections without a token pipelining calls at server-rpc
#   without reading the replies: RSS, and the legitimate client beside.
# - A client of 1 ID/s (burst 1,000) asking ranges of 10^7 segment IDs in
#   a loop over REST and RPC: the IDs it got.
set -euo pipefail
cd "$(dirname "$0")/.."
show() { grep -E '^(--- |ok |FAIL)|_test\.go:[0-9]+: [^ ]' || true; }
go test -count=1 -tags stress -v -run 'TestConnectionFloodThroughTheBinary|TestRangeQuotaThroughTheBinary' ./server-rest/ 2>&1 | show
go test -count=1 -tags stress -v -run 'TestConnectionFloodThroughTheBinary|TestRangeQuotaThroughTheBinary|TestPipelinedCallsWithoutATokenAreBounded' \
  ./server-rpc/ 2>&1 | show
