#!/usr/bin/env bash
# Load benchmark of server-rest with wrk, side by side with a bare net/http
# handler that returns a constant (scripts/barehttp), in one run so that all
# see the same machine. It alternates ROUNDS runs of /genid, of
# /segment/$TAG (segment mode on the default SQLite store, tag created with
# --segment-tags, Leaf's dynamic step) and of the bare handler, prints req/s
# and p99 latency per run and the median ratios to bare, then loads
# /genid?count=1000 and reports IDs/s as a share of the max-peak bit budget
# (2^20 = 1,048,576 IDs per second per machine id).
# Each run also reports the server's CPU time per request (from
# /proc/PID/stat), which other load on the machine disturbs far less than
# req/s: wrk and both servers share the same cores.
#
#   scripts/bench-rest.sh                     # 3 rounds x 10 s, 2 threads, 64 connections
#   ROUNDS=5 DURATION=20s CONNS=128 scripts/bench-rest.sh
#   GOGC_COMPARE=100 scripts/bench-rest.sh    # adds a second server-rest run with GOGC=100
#                                             # (the servers' own default is 400: internal/gctarget)
#   BARE_NO_TIMEOUTS=1 scripts/bench-rest.sh  # adds barehttp without http.Server timeouts (a bare
#                                             # handler's defaults): what the timeouts cost
#
# All traffic stays on 127.0.0.1; both servers are stopped on exit.
# Installs wrk with apt-get when it is missing (run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
BATCH=${BATCH:-1000}
TAG=${TAG:-bench}
BUDGET=1048576
GOGC_COMPARE=${GOGC_COMPARE:-}
BARE_NO_TIMEOUTS=${BARE_NO_TIMEOUTS:-}

source scripts/benchlib.sh # after the cd above: the repository root

go build -o "$tmp/server-rest" ./server-rest
go build -o "$tmp/barehttp" ./scripts/barehttp

"$tmp/server-rest" --listen 127.0.0.1:0 --machine 1 --data-dir "$tmp/data" --segment-tags "$TAG" 2>"$tmp/rest.log" &
rest_pid=$!
pids+=("$rest_pid")
"$tmp/barehttp" --listen 127.0.0.1:0 >"$tmp/bare.log" 2>&1 &
bare_pid=$!
pids+=("$bare_pid")
if [ -n "$GOGC_COMPARE" ]; then
  GOGC=$GOGC_COMPARE "$tmp/server-rest" --listen 127.0.0.1:0 --machine 2 --data-dir "$tmp/data2" 2>"$tmp/rest2.log" &
  rest2_pid=$!
  pids+=("$rest2_pid")
fi
rest=$(wait_for 's/.*msg="vesta: listening" server=rest addr=\([^ ]*\).*/\1/p' "$tmp/rest.log")
bare=$(wait_for 's/^listening \(.*\)$/\1/p' "$tmp/bare.log")
if [ -n "$BARE_NO_TIMEOUTS" ]; then
  "$tmp/barehttp" --listen 127.0.0.1:0 --timeouts=false >"$tmp/bare0.log" 2>&1 &
  bare0_pid=$!
  pids+=("$bare0_pid")
  bare0=$(wait_for 's/^listening \(.*\)$/\1/p' "$tmp/bare0.log")
fi
if [ -n "$GOGC_COMPARE" ]; then
  rest2=$(wait_for 's/.*msg="vesta: listening" server=rest addr=\([^ ]*\).*/\1/p' "$tmp/rest2.log")
fi
for _ in $(seq 300); do
  curl -fs "http://$rest/readyz" >/dev/null && break
  sleep 0.1
done
curl -fs "http://$rest/readyz" >/dev/null


# load URL DURATION PID: wrk against the server PID (wrk_load).
load() { wrk_load "$@"; }


echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency, $ROUNDS rounds, alternating"
load "http://$rest/genid" 2s "$rest_pid" >/dev/null # warm-up
load "http://$rest/segment/$TAG" 2s "$rest_pid" >/dev/null
load "http://$bare/" 2s "$bare_pid" >/dev/null
if [ -n "$GOGC_COMPARE" ]; then load "http://$rest2/genid" 2s "$rest2_pid" >/dev/null; fi
if [ -n "$BARE_NO_TIMEOUTS" ]; then load "http://$bare0/" 2s "$bare0_pid" >/dev/null; fi

printf '\n| round | target | req/s | p99 | server CPU µs/req |\n|---|---|---:|---:|---:|\n'
ratios=() seg_ratios=() cpu_ratios=() ours_all=() seg_all=() bare_all=() gc_ratios=() gc_cpu_ratios=() b0_ratios=() b0_cpu_ratios=() b0_ours=()
for r in $(seq "$ROUNDS"); do
  read -r ours ours_p99 ours_cpu < <(load "http://$rest/genid" "$DURATION" "$rest_pid")
  read -r seg seg_p99 seg_cpu < <(load "http://$rest/segment/$TAG" "$DURATION" "$rest_pid")
  read -r base base_p99 base_cpu < <(load "http://$bare/" "$DURATION" "$bare_pid")
  printf '| %d | server-rest /genid | %.0f | %s | %s |\n' "$r" "$ours" "$ours_p99" "$ours_cpu"
  printf '| %d | server-rest /segment/%s | %.0f | %s | %s |\n' "$r" "$TAG" "$seg" "$seg_p99" "$seg_cpu"
  printf '| %d | bare net/http | %.0f | %s | %s |\n' "$r" "$base" "$base_p99" "$base_cpu"
  if [ -n "$BARE_NO_TIMEOUTS" ]; then
    read -r b0 b0_p99 b0_cpu < <(load "http://$bare0/" "$DURATION" "$bare0_pid")
    printf '| %d | bare net/http, no timeouts | %.0f | %s | %s |\n' "$r" "$b0" "$b0_p99" "$b0_cpu"
    b0_ratios+=("$(awk -v a="$base" -v b="$b0" 'BEGIN {printf "%.3f", a/b}')")
    b0_cpu_ratios+=("$(awk -v a="$b0_cpu" -v b="$base_cpu" 'BEGIN {printf "%.3f", a/b}')")
    b0_ours+=("$(awk -v a="$ours" -v b="$b0" 'BEGIN {printf "%.3f", a/b}')")
  fi
  if [ -n "$GOGC_COMPARE" ]; then
    read -r gc gc_p99 gc_cpu < <(load "http://$rest2/genid" "$DURATION" "$rest2_pid")
    printf '| %d | server-rest /genid, GOGC=%s | %.0f | %s | %s |\n' "$r" "$GOGC_COMPARE" "$gc" "$gc_p99" "$gc_cpu"
    gc_ratios+=("$(awk -v a="$ours" -v b="$gc" 'BEGIN {printf "%.3f", a/b}')")
    gc_cpu_ratios+=("$(awk -v a="$gc_cpu" -v b="$ours_cpu" 'BEGIN {printf "%.3f", a/b}')")
  fi
  ratios+=("$(awk -v a="$ours" -v b="$base" 'BEGIN {printf "%.3f", a/b}')")
  seg_ratios+=("$(awk -v a="$seg" -v b="$base" 'BEGIN {printf "%.3f", a/b}')")
  cpu_ratios+=("$(awk -v a="$base_cpu" -v b="$ours_cpu" 'BEGIN {printf "%.3f", a/b}')")
  ours_all+=("$ours")
  seg_all+=("$seg")
  bare_all+=("$base")
done
printf '\nper-round ratio ours/bare (req/s): %s\n' "${ratios[*]}"
printf 'median req/s: server-rest /genid %.0f, server-rest /segment/%s %.0f, bare %.0f\n' \
  "$(printf '%s\n' "${ours_all[@]}" | median)" "$TAG" "$(printf '%s\n' "${seg_all[@]}" | median)" \
  "$(printf '%s\n' "${bare_all[@]}" | median)"
printf 'median ratio ours/bare (req/s): %s (goal >= 0.95)\n' "$(printf '%s\n' "${ratios[@]}" | median)"
printf 'median ratio /segment/%s / bare (req/s): %s (per round: %s)\n' "$TAG" \
  "$(printf '%s\n' "${seg_ratios[@]}" | median)" "${seg_ratios[*]}"
printf 'median CPU-efficiency ratio bare-CPU/ours-CPU per request: %s (per round: %s)\n' \
  "$(printf '%s\n' "${cpu_ratios[@]}" | median)" "${cpu_ratios[*]}"
if [ -n "$BARE_NO_TIMEOUTS" ]; then
  printf 'median ratio bare with timeouts / without: req/s %s (per round: %s), CPU-efficiency %s (per round: %s)\n' \
    "$(printf '%s\n' "${b0_ratios[@]}" | median)" "${b0_ratios[*]}" \
    "$(printf '%s\n' "${b0_cpu_ratios[@]}" | median)" "${b0_cpu_ratios[*]}"
  printf 'median ratio server-rest /genid / bare without timeouts (the check'"'"'s ratio): %s (per round: %s)\n' \
    "$(printf '%s\n' "${b0_ours[@]}" | median)" "${b0_ours[*]}"
fi
if [ -n "$GOGC_COMPARE" ]; then
  printf 'median ratio default GOGC / GOGC=%s: req/s %s (per round: %s), CPU per request %s (per round: %s)\n' \
    "$GOGC_COMPARE" "$(printf '%s\n' "${gc_ratios[@]}" | median)" "${gc_ratios[*]}" \
    "$(printf '%s\n' "${gc_cpu_ratios[@]}" | median)" "${gc_cpu_ratios[*]}"
fi
curl -fs "http://$rest/segment" | sed 's/^/segment buffers after the runs: /'
echo

printf '\n| round | target | req/s | IDs/s | share of budget | p99 |\n|---|---|---:|---:|---:|---:|\n'
shares=()
for r in $(seq "$ROUNDS"); do
  read -r rps p99 _ < <(load "http://$rest/genid?count=$BATCH" "$DURATION" "$rest_pid")
  ids=$(awk -v a="$rps" -v n="$BATCH" 'BEGIN {printf "%.0f", a*n}')
  share=$(awk -v i="$ids" -v b="$BUDGET" 'BEGIN {printf "%.1f", 100*i/b}')
  shares+=("$share")
  printf '| %d | /genid?count=%d | %.0f | %s | %s%% | %s |\n' "$r" "$BATCH" "$rps" "$ids" "$share" "$p99"
done
printf '\nmedian batch share of the max-peak budget (%d IDs/s): %s%% (goal >= 95%%)\n' \
  "$BUDGET" "$(printf '%s\n' "${shares[@]}" | median)"
waits=$(curl -fs "http://$rest/metrics" | awk '/^vesta_sequence_exhaustion_waits_total/ {print $2}')
echo "sequence exhaustion waits during the run: $waits"
# The server's memory: the peak resident set over the whole run (VmHWM) and
# now, as the kernel counts them (docs/deploy.md sizes the pods from it).
awk '/^VmHWM|^VmRSS/ {printf "server-rest %s %.1f MiB\n", $1, $2/1024}' "/proc/$rest_pid/status"
