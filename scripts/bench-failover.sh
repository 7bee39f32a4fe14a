#!/usr/bin/env bash
# Segment store failover: how long two server-rest processes take to serve
# segment IDs from a promoted standby after their PostgreSQL primary stops
# as in a crash.
#
# It runs TestSegmentFailoverTwoServers (server-rest/failover_e2e_test.go)
# ROUNDS times, without the race detector and with the build tag stress
# (it is one of the heavy tests a plain go test skips): the test builds a primary with
# a synchronous standby (and a cascade) by pg_basebackup -R on random
# 127.0.0.1 ports, puts two server-rest processes under load on a DSN
# naming both, stops the primary with pg_ctl stop -m immediate, promotes
# the standby, and checks every ID. "recover" is the time from the stop
# to the first ID a server hands out from a range of the new primary.
#
#   scripts/bench-failover.sh              # ROUNDS=5
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

cmd="go test -tags stress -count=$ROUNDS -p 1 -parallel 1 -v -run '^TestSegmentFailoverTwoServers\$' ./server-rest/"
eval "$cmd" | tee "$raw" | grep -E -- '--- (PASS|FAIL)|time to recover' >&2
grep -q '^ok' "$raw" || { echo "the test failed" >&2; exit 1; }

# ms: a Go duration (842ms, 1.13s) in milliseconds.
ms() { awk '{v=$1; if (v ~ /ms$/) {sub(/ms$/,"",v); print v} else {sub(/s$/,"",v); print v*1000}}'; }
# median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

lines=$(grep 'time to recover' "$raw")
promote=$(sed -E 's/.*pg_ctl promote took ([0-9.]+m?s).*/\1/' <<<"$lines" | ms)
s1=$(sed -E 's/.*server 1 ([0-9.]+m?s),.*/\1/' <<<"$lines" | ms)
s2=$(sed -E 's/.*server 2 ([0-9.]+m?s);.*/\1/' <<<"$lines" | ms)
failed=$(sed -E 's/.*; ([0-9]+) \+ ([0-9]+) requests answered 503.*/\1 \2/' <<<"$lines" | awk '{print $1 + $2}')

pgversion=$("$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl" --version 2>/dev/null || echo "PostgreSQL: none")
echo
echo "Machine: $(nproc) cores, $(go env GOOS)/$(go env GOARCH), $(go version | awk '{print $3}'), $pgversion"
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Command: scripts/bench-failover.sh (ROUNDS=$ROUNDS), which runs $cmd"
echo
echo "| round | pg_ctl promote ms | server 1 recovers ms | server 2 recovers ms | 503 answers |"
echo "|---|---:|---:|---:|---:|"
paste <(seq "$ROUNDS") <(echo "$promote") <(echo "$s1") <(echo "$s2") <(echo "$failed") |
  awk -F'\t' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}'
echo
echo "median: promote $(median <<<"$promote") ms; recover $( (echo "$s1"; echo "$s2") | median) ms (both servers, all rounds)"
