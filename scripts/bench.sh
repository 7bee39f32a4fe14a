#!/usr/bin/env bash
# Core (embedded) benchmarks of package service: BenchmarkCPU,
# BenchmarkGenIds1000 and BenchmarkSustained, COUNT rounds of each. It
# prints the raw `go test -bench` output on stderr and one Markdown table of
# the medians on stdout.
#
#   scripts/bench.sh                    # COUNT=3: about 4 minutes on 2 cores
#   COUNT=5 scripts/bench.sh > core.md
#
# The rounds are interleaved (round 1 of every benchmark, then round 2, ...)
# rather than -count N back to back, so that a burst of load from something
# else on a shared machine spoils one round of several benchmarks instead
# of every round of one; the median then drops it.
#
# Environment: COUNT (rounds, default 3), BENCHTIME (per CPU benchmark run,
# default 1s), SUSTAIN (measured window of each sustained run, default 2s),
# BENCH_FILTER (a regexp of populators, default all).
set -euo pipefail

cd "$(dirname "$0")/.."

COUNT=${COUNT:-3}
BENCHTIME=${BENCHTIME:-1s}
SUSTAIN=${SUSTAIN:-2s}
FILTER=${BENCH_FILTER:-.}

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

# Build once; every round reuses the test binary from the cache.
go test -run '^$' -bench '^$' ./service >/dev/null

for round in $(seq "$COUNT"); do
	echo "# round $round/$COUNT" >&2
	go test -run '^$' -bench "^(BenchmarkCPU|BenchmarkGenIds1000)\$/${FILTER}/" \
		-benchtime "$BENCHTIME" -count 1 ./service | tee -a "$raw" >&2
	# A sustained run measures one fixed window of wall time whatever b.N
	# is, so it runs once (-benchtime 1x).
	go test -run '^$' -bench "^BenchmarkSustained\$/${FILTER}/" \
		-benchtime 1x -count 1 ./service -args "-vesta.sustain=$SUSTAIN" | tee -a "$raw" >&2
done

go run ./scripts/benchtable -window "$SUSTAIN" < "$raw"
