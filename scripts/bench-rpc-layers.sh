#!/usr/bin/env bash
# bench-rpc-layers.sh: where the time of one GenId goes, layer by layer, and
# what extra work per call costs the ratio to bare net/rpc (docs/benchmarks.md,
# "RPC hot path"). Prints Markdown tables of medians, with per-run ranges:
#
#   scripts/bench-rpc-layers.sh                # RUNS=6
#   OLD=60ee978~1 scripts/bench-rpc-layers.sh  # also BenchmarkGenId of an older commit
#
# - BenchmarkGenIdLayers (package client): GenId at one caller through each
#   layer, each row paired with bare net/rpc in the same run, at 2 Ps and with
#   GOMAXPROCS=1 (where the runs agree within about ±0.02).
# - BenchmarkBareSpin: a bare server spinning 1, 2 or 4 µs per call against
#   plain bare: what that much work on a call's path costs.
# - BenchmarkReceiverGenId (package internal/rpcapi): the receiver's own ns per
#   GenId in process, with GOMAXPROCS=1.
# - With OLD=<git ref>: BenchmarkGenId of this tree and of OLD (checked out in a
#   temporary worktree; built without the workspace when OLD has no go.work),
#   in turns, so both see the same machine.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-6}
tmp=$(mktemp -d)
cleanup() {
	if [ -d "$tmp/old" ]; then git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go test -c -o "$tmp/now.test" ./client
go test -c -o "$tmp/recv.test" ./internal/rpcapi
if [ -n "${OLD:-}" ]; then
	git worktree add --detach "$tmp/old" "$OLD" >/dev/null 2>&1
	if [ -f "$tmp/old/go.work" ]; then
		(cd "$tmp/old" && go test -c -o "$tmp/old.test" ./client)
	else
		(cd "$tmp/old" && GOWORK=off go test -c -o "$tmp/old.test" ./client)
	fi
fi

# run BINARY DIR CPU PATTERN LABEL: one run of the benchmarks matching
# PATTERN; prints "LABEL name ratio" per row.
run() {
	(cd "$2" && "$1" -test.run '^$' -test.bench "$4" -test.cpu "$3" -test.count 1) |
		awk -v l="$5" '/^Benchmark/ {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
			for (i = 2; i <= NF; i++) if ($i == "ratio") print l, name, $(i-1)
		}'
}

for i in $(seq "$RUNS"); do
	echo "run $i/$RUNS" >&2
	run "$tmp/now.test" client 2 'BenchmarkGenIdLayers$|BenchmarkBareSpin$' 2 >>"$tmp/ratios.txt"
	run "$tmp/now.test" client 1 'BenchmarkGenIdLayers$|BenchmarkBareSpin$' 1 >>"$tmp/ratios.txt"
	(cd internal/rpcapi && "$tmp/recv.test" -test.run '^$' -test.bench 'BenchmarkReceiverGenId$' -test.cpu 1) |
		awk '/^Benchmark/ { name = $1; sub(/^Benchmark/, "", name); print "ns", name, $3 }' >>"$tmp/recv.txt"
	if [ -n "${OLD:-}" ]; then
		run "$tmp/now.test" client 2 'BenchmarkGenId$' now >>"$tmp/genid.txt"
		run "$tmp/old.test" "$tmp/old/client" 2 'BenchmarkGenId$' old >>"$tmp/genid.txt"
	fi
done

# stat FILE LABEL NAME [FORMAT]: "median (min–max)" of NAME's values under
# LABEL (FORMAT: printf's, %.3f by default).
stat() {
	awk -v l="$2" -v n="$3" '$1 == l && $2 == n { print $3 }' "$1" | sort -g |
		awk -v f="${4:-%.3f}" '{ v[NR] = $1 } END {
			if (NR == 0) { print "—"; exit }
			m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
			printf f " (" f "–" f ")\n", m, v[1], v[NR]
		}'
}

# table FILE TITLE1 LABEL1 [TITLE2 LABEL2 [FORMAT]]: a row per name in FILE
# (first seen first), a column per label.
table() {
	local file=$1 t1=$2 l1=$3 t2=${4:-} l2=${5:-} f=${6:-%.3f}
	if [ -n "$t2" ]; then echo "| row | $t1 | $t2 |"; echo "|---|---|---|"; else echo "| row | $t1 |"; echo "|---|---|"; fi
	awk '{ print $2 }' "$file" | awk '!seen[$0]++' | while read -r name; do
		if [ -n "$t2" ]; then
			echo "| $name | $(stat "$file" "$l1" "$name" "$f") | $(stat "$file" "$l2" "$name" "$f") |"
		else
			echo "| $name | $(stat "$file" "$l1" "$name" "$f") |"
		fi
	done
}

table "$tmp/ratios.txt" "ratio to bare, 2 Ps" 2 "ratio to bare, GOMAXPROCS=1" 1
echo
table "$tmp/recv.txt" "BenchmarkReceiverGenId, ns per call (GOMAXPROCS=1)" ns "" "" "%.0f"
if [ -n "${OLD:-}" ]; then
	echo
	table "$tmp/genid.txt" "BenchmarkGenId, this tree" now "BenchmarkGenId, $OLD" old
fi
echo
echo "medians of $RUNS runs; $(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
