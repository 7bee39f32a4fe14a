#!/usr/bin/env bash
# bench-rpc.sh: RPC benchmarks of vesta-go (package client), printed as a
# Markdown table for docs/benchmarks.md.
#
#   scripts/bench-rpc.sh                  # RUNS=7 BATCH_RUNS=3
#   RUNS=9 scripts/bench-rpc.sh
#
# - GenId calls/s through client.Client against an in-process server-rpc,
#   and against a bare net/rpc service that returns a counter (same number of
#   connections), with 1 and 64 concurrent callers. The two alternate within
#   each run in slices of 256 calls (1 caller) or 1024 (64 callers), 10-50ms,
#   so both see the same load from the rest of the machine; figures are
#   medians over RUNS runs of 2s; the ratio is the median of the per-run
#   ratios, with their range. Next to the wall-clock ratio, the CPU time per
#   call (client and server share the process) gives ours/bare by CPU, which
#   the load from other processes on the machine disturbs much less. The
#   server runs the default populator (lock), and at 64 callers also packed.
# - GenIds batches of 1000 (4 callers, 4s): IDs per whole second against the
#   max-peak budget of 2^20 = 1,048,576 per second and machine id.
# - GenId served from the client-side buffer (WithBuffer(50000, 10000)).
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
BATCH_RUNS=${BATCH_RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/client.test" ./client
bench() { # pattern benchtime
	(cd client && "$tmp/client.test" -test.run '^$' -test.bench "$1" -test.benchtime "$2") | grep '^Benchmark' || true
}
for i in $(seq "$RUNS"); do
	echo "run $i/$RUNS" >&2
	bench 'BenchmarkGenId$' 2s | sed "s/^/run=$i /" >>"$tmp/genid.txt"
	bench 'BenchmarkBufferedGenId$' 1s | sed "s/^/run=$i /" >>"$tmp/buffered.txt"
done
for i in $(seq "$BATCH_RUNS"); do
	echo "batch run $i/$BATCH_RUNS" >&2
	bench 'BenchmarkGenIdsBatch$' 4s >>"$tmp/batch.txt"
done

# metric FILE UNIT: prints "run name value" for each line with UNIT.
metric() {
	awk -v unit="$2" '{
		run = "-"; if ($1 ~ /^run=/) { run = substr($1, 5); $1 = ""; $0 = $0 }
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		for (i = 2; i <= NF; i++) if ($i == unit) print run, name, $(i-1)
	}' "$1"
}
# median: the median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a"; exit } ; if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2] + v[NR/2+1]) / 2 }'
}
med() { # FILE UNIT NAME
	metric "$1" "$2" | awk -v n="$3" '$2 == n { print $3 }' | median
}
# fmt VALUE [DECIMALS]: the value rounded, with thousands separators.
fmt() {
	awk -v v="$1" -v d="${2:-0}" 'BEGIN {
		if (v == "n/a") { print v; exit }
		s = sprintf("%.*f", d, v); frac = ""
		if (d > 0) { frac = substr(s, index(s, ".")); s = substr(s, 1, index(s, ".") - 1) }
		while (length(s) > 3 && s ~ /[0-9][0-9][0-9][0-9]$/) {
			head = substr(s, 1, length(s) - 3); tail = substr(s, length(s) - 2)
			out = "," tail out; s = head
		}
		print s out frac
	}'
}

# span FILE UNIT NAME: "min–max" of the per-run values.
span() {
	local v
	v=$(metric "$1" "$2" | awk -v n="$3" '$2 == n { print $3 }' | sort -g)
	echo "$(fmt "$(head -n1 <<<"$v")" 3)–$(fmt "$(tail -n1 <<<"$v")" 3)"
}

echo "| mode | callers | bare net/rpc calls/s | vesta calls/s | vesta / bare, wall (median) | per-run range | vesta / bare, CPU per call (median) | per-run range |"
echo "|---|---:|---:|---:|---:|---|---:|---|"
for row in lock:1 lock:64 packed:64; do
	p=${row%%:*} c=${row##*:} name="GenId/populator=${row%%:*}/callers=${row##*:}"
	bare=$(med "$tmp/genid.txt" bare-calls/s "$name")
	ours=$(med "$tmp/genid.txt" calls/s "$name")
	echo "| GenId over TCP (client.New, pool 4), populator $p | $c | $(fmt "$bare") | $(fmt "$ours") |" \
		"$(fmt "$(med "$tmp/genid.txt" ratio "$name")" 3) | $(span "$tmp/genid.txt" ratio "$name") |" \
		"$(fmt "$(med "$tmp/genid.txt" cpu-ratio "$name")" 3) | $(span "$tmp/genid.txt" cpu-ratio "$name") |"
done
for c in 1 64; do
	echo "| GenId from the client buffer (WithBuffer(50000, 10000)) | $c | | $(fmt "$(med "$tmp/buffered.txt" calls/s "BufferedGenId/callers=$c")") | | | | |"
done
echo
echo "| GenIds(1000), 4 callers | IDs/s over the run | IDs per whole second | share of the 2^20/s budget |"
echo "|---|---:|---:|---:|"
echo "| median of $BATCH_RUNS runs of 4s | $(fmt "$(med "$tmp/batch.txt" ids/s GenIdsBatch)") | $(fmt "$(med "$tmp/batch.txt" ids/full-second GenIdsBatch)") | $(fmt "$(med "$tmp/batch.txt" %budget GenIdsBatch)" 1)% |"
