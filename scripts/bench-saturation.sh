#!/usr/bin/env bash
# bench-saturation.sh: a saturated generator, embedded and behind each server,
# as Markdown tables for docs/benchmarks.md.
#
#   scripts/bench-saturation.sh                       # WINDOW=4s POPULATORS=lock,sync,atomic,packed
#   WINDOW=2s POPULATORS=lock scripts/bench-saturation.sh
#
# - Embedded (scripts/satprobe): every populator, both types, 1 and 64
#   goroutines calling GenId in a loop: share of the bit budget, the
#   process's cores busy, errors; then a pass that times every call for the
#   slowest (the timing costs CPU, so the cores come from the first pass).
# - Servers (scripts/satserve): server-rest and server-rpc started with no
#   data dir, 1 and 64 callers asking for batches of 1,000 flat out (far
#   above the budget): share of the budget served, the server process's
#   cores, errors, the slowest call and duplicates (every ID is checked).
#   A saturated server formats and sends a million IDs per second: its
#   cores are mostly that, not waiting.
set -euo pipefail
cd "$(dirname "$0")/.."
WINDOW=${WINDOW:-4s}
POPULATORS=${POPULATORS:-lock,sync,atomic,packed}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/satprobe" ./scripts/satprobe
go build -o "$tmp/satserve" ./scripts/satserve
go build -o "$tmp/server-rest" ./server-rest
go build -o "$tmp/server-rpc" ./server-rpc

echo "### Embedded service, cores (go run ./scripts/satprobe -timed=false -window $WINDOW -populator $POPULATORS)"
echo
"$tmp/satprobe" -timed=false -window "$WINDOW" -populator "$POPULATORS"
echo
echo "### Embedded service, every call timed (go run ./scripts/satprobe -window $WINDOW -populator $POPULATORS)"
echo
"$tmp/satprobe" -window "$WINDOW" -populator "$POPULATORS"
echo
echo "### Servers, batches of 1,000 (scripts/satserve -window $WINDOW)"
echo
echo "| server | type/populator | callers | budget | server cores | errors | slowest call | duplicates |"
echo "|---|---|---|---|---|---|---|---|"
for server in rest rpc; do
  for typ in max-peak min-granularity; do
    for pop in ${POPULATORS//,/ }; do
      "$tmp/satserve" -server "$server" -bin "$tmp/server-$server" -type "$typ" -populator "$pop" -window "$WINDOW"
    done
  done
done
