#!/usr/bin/env bash
# How long the test suite takes: go test -count=1 ./... (with RACE=1,
# go test -race), COUNT rounds (default 3), side by side with an earlier
# revision when one is given. It prints one Markdown table of medians on
# stdout: the wall time, the CPU time (user+sys, which load from elsewhere
# changes much less than the wall time) and each package's time as go test
# reports it.
#
#   scripts/test-time.sh                  # this tree
#   scripts/test-time.sh 7852632          # and 7852632 (git archive into a temp dir)
#   COUNT=5 RACE=1 scripts/test-time.sh 7852632
#   ALL=1 scripts/test-time.sh            # every module of the workspace, not ./... (the root module)
#
# The rounds are interleaved (REV, then this tree, then REV, ...) so that a
# burst of load on a shared machine spoils one round of each rather than
# every round of one; the median then drops it. A warm-up compiles both
# trees first, so that the rounds measure linking and running, not
# compiling.
set -euo pipefail

cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
flags=(-count=1)
if [ "${RACE:-}" = 1 ]; then flags+=(-race); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trees=()
labels=()
if [ $# -ge 1 ]; then
	mkdir "$work/rev"
	git archive "$1" | tar -x -C "$work/rev"
	trees+=("$work/rev")
	labels+=("$1")
fi
trees+=("$PWD")
labels+=("this tree")

# pats prints the package patterns of tree $1: ./... (the root module), or
# with ALL=1 one pattern per module of its workspace.
pats() { if [ "${ALL:-}" = 1 ] && [ -f "$1/go.work" ]; then (cd "$1" && go list -m -f '{{.Dir}}/...'); else echo ./...; fi; }

for t in "${trees[@]}"; do
	(cd "$t" && go test "${flags[@]}" -run '^$' $(pats "$t") >/dev/null)
done

TIMEFORMAT='%R %U %S'
for round in $(seq "$COUNT"); do
	for i in "${!trees[@]}"; do
		echo "# round $round/$COUNT: ${labels[$i]} (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
		out="$work/out-$i-$round"
		if ! { time (cd "${trees[$i]}" && go test "${flags[@]}" $(pats "${trees[$i]}") >"$out" 2>&1); } 2>"$work/time-$i-$round"; then
			# A failed round is shown and left out of the medians.
			grep -E -A12 '^--- FAIL' "$out" >&2 || cat "$out" >&2
			echo "# round $round: go test failed in ${labels[$i]}; left out" >&2
			echo "$i" >>"$work/failed"
			continue
		fi
		read -r wall user sys <"$work/time-$i-$round"
		echo "$i wall $wall" >>"$work/all"
		echo "$i cpu $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" >>"$work/all"
		awk -v i="$i" '$1 == "ok" { sub(/s$/, "", $3); sub(/^github.com\/vesta-go\/vesta\//, "", $2); print i, $2, $3 }' "$out" >>"$work/all"
		grep -E '^(ok|FAIL)' "$out" | sort -k3 -rn | head -5 >&2 || true
	done
done

# Medians per (tree, row): wall, CPU, then the packages by this tree's
# median, leaving out those under half a second in every tree.
header="| |"
rule="|---|"
for l in "${labels[@]}"; do
	header+=" $l |"
	rule+="---:|"
done
failed=""
for i in "${!labels[@]}"; do
	n=$(grep -cx "$i" "$work/failed" 2>/dev/null || true)
	if [ "${n:-0}" -gt 0 ]; then failed+="${failed:+, }$n failed round(s) of ${labels[$i]}"; fi
done
echo "Median of $COUNT rounds of \`go test ${flags[*]} ./...\`, seconds${failed:+ ($failed, left out)}."
echo
echo "$header"
echo "$rule"
awk -v n="${#trees[@]}" '
	{ v[$1, $2] = v[$1, $2] " " $3; rows[$2] = 1 }
	function median(s,   a, k, i, j, t) {
		k = split(s, a, " ")
		for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2
	}
	END {
		for (r in rows) {
			line = "| " (r == "wall" ? "**wall**" : r == "cpu" ? "**CPU (user+sys)**" : "`" r "`") " |"
			big = 0
			for (i = 0; i < n; i++) {
				if (v[i, r] == "") { line = line " - |"; continue }
				m = median(v[i, r]); big = big || m >= 0.5
				line = line " " sprintf("%.1f", m) " |"
			}
			key = r == "wall" ? 1e9 : r == "cpu" ? 1e8 : (v[n-1, r] == "" ? 0 : median(v[n-1, r]))
			if (big) print key "\t" line
		}
	}' "$work/all" | sort -t$'\t' -k1 -rn | cut -f2-
