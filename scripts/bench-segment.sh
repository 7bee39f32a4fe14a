#!/usr/bin/env bash
# Segment-mode benchmark: IDs per second for one tag, embedded, on SQLite
# and PostgreSQL, and database round trips (Alloc calls) per million IDs.
#
# The Go benchmark (BenchmarkSegment in service/backend/stores/generatorsuite/bench_test.go)
# starts what it needs itself: a throw-away PostgreSQL server (initdb +
# pg_ctl from PATH or /usr/lib/postgresql/*/bin, fsync on) and an SQLite
# file in a temp dir. Prints a Markdown table of medians over COUNT runs.
#
#   scripts/bench-segment.sh                 # BENCHTIME=2s COUNT=3
#   BENCHTIME=5s COUNT=5 scripts/bench-segment.sh
#
# The same generator served over HTTP (GET /segment/{tag}, with wrk) is
# measured by scripts/bench-rest.sh, in the same rounds as /genid.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHTIME=${BENCHTIME:-2s}
COUNT=${COUNT:-3}
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

cmd="go test -run '^\$' -bench BenchmarkSegment -benchtime $BENCHTIME -count $COUNT ./service/backend/stores/generatorsuite/"
eval "$cmd" | tee "$raw" >&2

pg=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
pgversion=$({ command -v pg_ctl >/dev/null && pg_ctl --version; } || { [ -n "$pg" ] && "$pg/pg_ctl" --version; } || echo "PostgreSQL: none")
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)

echo
echo "Machine: ${cpu:-unknown CPU}, $(nproc) cores, $(go env GOOS)/$(go env GOARCH), $(go version | awk '{print $3}'), ${pgversion}"
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Command: \`scripts/bench-segment.sh\` (BENCHTIME=$BENCHTIME COUNT=$COUNT), which runs \`$cmd\`"
echo
echo "| store | calls | ns/op | IDs/s per tag | DB round trips per million IDs |"
echo "|---|---|---:|---:|---:|"
awk '
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkSegment\// {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkSegment\//, "", name)
	if (!(name in seen)) { seen[name] = 1; order[++count] = name }
	for (i = 3; i < NF; i += 2) vals[name, $(i + 1)] = vals[name, $(i + 1)] " " $i
}
END {
	for (k = 1; k <= count; k++) {
		name = order[k]; store = name; sub(/\/.*/, "", store); calls = name; sub(/^[^\/]*\//, "", calls)
		printf "| %s | %s | %.1f | %.0f | %.1f |\n", store, calls, median(vals[name, "ns/op"]), median(vals[name, "ids/s"]), median(vals[name, "trips/Mids"])
	}
}' "$raw"
