#!/usr/bin/env bash
# What the status page costs: /genid throughput under wrk while one
# browser tab's worth of polling reads /status once a second, side by side
# with the same load and no polling. Each round runs both, in alternating
# order (idle first in odd rounds, polled first in even ones) so that drift
# in the machine's other load falls on both; it prints req/s, p99 and the
# server's CPU time per /genid request (user + system from /proc/PID/stat,
# which other load disturbs far less than req/s) per run, and the median
# ratios polled/idle. The poller is one curl on one keep-alive connection
# (--rate 1/s), as a tab's fetch is; every answer must be 200. Then it
# measures what one /status costs the server (wrk on /status: CPU µs per
# request), so the share of a core one tab takes can be computed too.
#
#   scripts/bench-status.sh                   # 5 rounds x 10 s, 2 threads, 64 connections
#   ROUNDS=7 DURATION=20s scripts/bench-status.sh
#   POLL_PATH=/healthz scripts/bench-status.sh   # control: poll an endpoint that does nothing
#
# Goal: polled /genid req/s no more than 2% below idle (median ratio >= 0.98).
# All traffic stays on 127.0.0.1; the server and the poller are stopped on exit.
# Installs wrk with apt-get when it is missing (run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
POLL_PATH=${POLL_PATH:-/status}

source scripts/benchlib.sh # after the cd above: the repository root

go build -o "$tmp/server-rest" ./server-rest
# wrk holds CONNS connections from 127.0.0.1: raise the per-address cap
# (64) so that the poller's one more is not closed at accept.
"$tmp/server-rest" --listen 127.0.0.1:0 --machine 1 --data-dir "$tmp/data" --segment-tags order,invoice \
  --max-conns-per-ip 1000 2>"$tmp/rest.log" &
rest_pid=$!
pids+=("$rest_pid")
rest=$(wait_for 's/.*msg="vesta: listening" server=rest addr=\([^ ]*\).*/\1/p' "$tmp/rest.log")
for _ in $(seq 300); do
  curl -fs "http://$rest/readyz" >/dev/null && break
  sleep 0.1
done
curl -fs "http://$rest/readyz" >/dev/null
curl -fs "http://$rest/segment/order" >/dev/null # a tag with buffers, so /status lists them

# load URL DURATION: wrk against server-rest (wrk_load).
load() { wrk_load "$1" "$2" "$rest_pid"; }

# polls CODE: how many POLL_PATH requests the server answered with CODE
# ("" any), from its own metrics.
polls() {
  curl -fs "http://$rest/metrics" |
    awk -v c="$1" -v r="route=\"$POLL_PATH\"" '/^vesta_http_requests_total\{/ && index($0, r) && index($0, "code=\"" c) {n+=$2} END {print n+0}'
}

# run POLL DURATION: load /genid, with POLL=yes while one curl reads
# POLL_PATH once a second on one keep-alive connection (its query only
# numbers the requests: /status reads none), as a browser tab does; prints
# what load prints, and the number of polls into $tmp/polls.n. Both kinds
# of run take the same steps around the load (the metrics reads), so that
# only the poller differs. Every poll must have been answered 200.
run() {
  ok0=$(polls 200)
  all0=$(polls "")
  poller=""
  if [ "$1" = yes ]; then
    curl -s --rate 1/s -o /dev/null "http://$rest$POLL_PATH?poll=[1-100000]" 2>/dev/null &
    poller=$!
  fi
  load "http://$rest/genid" "$2"
  if [ -n "$poller" ]; then
    kill "$poller" 2>/dev/null || true
    wait "$poller" 2>/dev/null || true
  fi
  ok=$(($(polls 200) - ok0))
  all=$(($(polls "") - all0))
  if [ "$1" = yes ] && { [ "$ok" -lt 2 ] || [ "$ok" -ne "$all" ]; }; then
    echo "the poller read $POLL_PATH $all times, $ok answered 200" >&2
    return 1
  fi
  if [ "$1" = no ] && [ "$all" -ne 0 ]; then
    echo "$POLL_PATH was read $all times in a run without the poller" >&2
    return 1
  fi
  if [ "$1" = yes ]; then echo "$ok" >"$tmp/polls.n"; fi
}

echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency on /genid, $ROUNDS rounds, idle and polled ($POLL_PATH once a second) alternating"
load "http://$rest/genid" 3s >/dev/null # warm-up

printf '\n| round | %s polled | req/s | p99 | server CPU µs/req | polls |\n|---|---|---:|---:|---:|---:|\n' "$POLL_PATH"
ratios=() cpu_ratios=() idle_all=() polled_all=()
for r in $(seq "$ROUNDS"); do
  # Run in this shell, not in a process substitution: run must have
  # counted its polls (and stopped its poller) before the next run.
  if [ $((r % 2)) -eq 1 ]; then
    run no "$DURATION" >"$tmp/idle"
    run yes "$DURATION" >"$tmp/polled"
  else
    run yes "$DURATION" >"$tmp/polled"
    run no "$DURATION" >"$tmp/idle"
  fi
  read -r i_rps i_p99 i_cpu <"$tmp/idle"
  read -r p_rps p_p99 p_cpu <"$tmp/polled"
  printf '| %d | no | %.0f | %s | %s | |\n' "$r" "$i_rps" "$i_p99" "$i_cpu"
  printf '| %d | once a second | %.0f | %s | %s | %s |\n' "$r" "$p_rps" "$p_p99" "$p_cpu" "$(cat "$tmp/polls.n")"
  ratios+=("$(awk -v a="$p_rps" -v b="$i_rps" 'BEGIN {printf "%.3f", a/b}')")
  cpu_ratios+=("$(awk -v a="$p_cpu" -v b="$i_cpu" 'BEGIN {printf "%.3f", a/b}')")
  idle_all+=("$i_rps")
  polled_all+=("$p_rps")
done
printf '\nper-round ratio polled/idle (req/s): %s\n' "${ratios[*]}"
printf 'median req/s: idle %.0f, polled %.0f\n' \
  "$(printf '%s\n' "${idle_all[@]}" | median)" "$(printf '%s\n' "${polled_all[@]}" | median)"
printf 'median ratio polled/idle (req/s): %s (goal >= 0.98)\n' "$(printf '%s\n' "${ratios[@]}" | median)"
printf 'median ratio polled/idle (server CPU per /genid): %s (per round: %s)\n' \
  "$(printf '%s\n' "${cpu_ratios[@]}" | median)" "${cpu_ratios[*]}"

# One /status on its own: its CPU cost, and so the share of a core one
# tab (one read a second) takes.
read -r s_rps s_p99 s_cpu < <(load "http://$rest/status" 5s)
printf '\n/status alone under wrk: %.0f req/s, p99 %s, server CPU %s µs per /status = %s%% of one core at one read a second\n' \
  "$s_rps" "$s_p99" "$s_cpu" "$(awk -v c="$s_cpu" 'BEGIN {printf "%.4f", c/1e4}')"
printf '/status document: %s bytes\n' "$(curl -fs "http://$rest/status" | wc -c)"
