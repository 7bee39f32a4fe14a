#!/usr/bin/env bash
# peerfloor.sh: a saturation harness's own cost. Copies the harness (a Go
# module of peer generators benchmarked side by side, like the project's
# saturation check's peerbench; its folder is HARNESS), adds
# scripts/peerfloor/gen_floor.go.txt — a generator per ID type that costs nothing but
# its wait — and runs it against this checkout: the "floor" rows are what the harness
# spends per ID (keeping every ID, its garbage collection) at the same rate, and the
# budget its own pauses cost a single caller, beside vesta's rows of the same run.
#
#   HARNESS=/path/to/peerbench scripts/peerfloor.sh [WINDOW]      # default 4s
set -euo pipefail
harness=$(realpath "${HARNESS:?peerfloor.sh: set HARNESS to the folder of the harness module (a peerbench)}")
cd "$(dirname "$0")/.."
[ -f "$harness/go.mod" ] || { echo "peerfloor.sh: no Go module in HARNESS=$harness" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$harness"/*.go "$harness"/go.mod "$harness"/go.sum "$tmp"/
# Named to sort after gen_vesta.go, so its rows come after vesta's (a warm heap for both).
cp scripts/peerfloor/gen_floor.go.txt "$tmp/gen_zfloor.go"
proj=$(pwd)
(cd "$tmp" && go mod edit -replace "github.com/vesta-go/vesta=$proj" && cat "$proj/go.sum" >>go.sum &&
  GOFLAGS=-mod=mod go build -o peerbench .)
"$tmp/peerbench" -window "${1:-4s}" 2>&1 | grep -E '^(vesta|floor)'
