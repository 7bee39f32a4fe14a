#!/usr/bin/env bash
# peerfloor.sh: the saturation harness's own cost. Copies
# ../shared/checks/tools/peerbench (the harness of ../shared/checks/saturation-cpu),
# adds scripts/peerfloor/gen_floor.go.txt — a generator per ID type that costs nothing but
# its wait — and runs it against this checkout: the "floor" rows are what the harness
# spends per ID (keeping every ID, its garbage collection) at the same rate, and the
# budget its own pauses cost a single caller, beside vesta's rows of the same run.
#
#   scripts/peerfloor.sh [WINDOW]      # default 4s
set -euo pipefail
cd "$(dirname "$0")/.."
harness=../shared/checks/tools/peerbench
[ -d "$harness" ] || { echo "peerfloor.sh: no $harness next to this checkout" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$harness"/*.go "$harness"/go.mod "$harness"/go.sum "$tmp"/
# Named to sort after gen_vesta.go, so its rows come after vesta's (a warm heap for both).
cp scripts/peerfloor/gen_floor.go.txt "$tmp/gen_zfloor.go"
proj=$(pwd)
(cd "$tmp" && go mod edit -replace "github.com/vesta-go/vesta=$proj" && cat "$proj/go.sum" >>go.sum &&
  GOFLAGS=-mod=mod go build -o peerbench .)
"$tmp/peerbench" -window "${1:-4s}" 2>&1 | grep -E '^(vesta|floor)'
