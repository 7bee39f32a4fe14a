#!/usr/bin/env bash
# bench-rpc-abuse.sh: a hostile network against server-rpc, with
# the figures for docs/benchmarks.md (see scripts/rpcabuse for the phases).
#
#   scripts/bench-rpc-abuse.sh                          # 5,000 idle + 1,000 slow conns from 127.0.0.2
#   scripts/bench-rpc-abuse.sh --idle 1100 --slow 0     # rpcabuse flags
#   scripts/bench-rpc-abuse.sh -- --max-conns-per-ip 10 # after --: server-rpc flags
#
# Linux only: the attackers dial from 127.0.0.2, the RSS is read from /proc.
set -euo pipefail

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/server-rpc" ./server-rpc
go build -o "$tmp/rpcabuse" ./scripts/rpcabuse
echo "Machine: $(nproc) cores, $(go env GOOS)/$(go env GOARCH), $(go version | awk '{print $3}'); load average $(cut -d' ' -f1 /proc/loadavg)"
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
"$tmp/rpcabuse" --bin "$tmp/server-rpc" "$@"
