#!/usr/bin/env bash
# Where a GET /genid request's CPU goes in server-rest, beside a bare net/http
# handler without timeouts (scripts/barehttp --timeouts=false), on the same
# machine in one run:
#
#  1. PAIRS interleaved pairs of 2 s wrk runs (-t1 -c64, alternating which
#     goes first), each pair a ratio of req/s: their median is the REST
#     throughput measure (the single-ID goal is 0.95 of bare);
#  2. with perf installed, one perf record (cpu-clock, 4 s, call graphs) of
#     each server under the same load, printed as CPU nanoseconds per request
#     for the frames that make a request: the total, reading it, the handler,
#     the state changes (net/http's setState, with server-rest's ConnState
#     hooks), the response flush and its write syscall.
#
#   scripts/profile-rest.sh            # 6 pairs, then perf if installed
#   PAIRS=12 PERF=0 scripts/profile-rest.sh
#
# All traffic stays on 127.0.0.1; both servers are stopped on exit. perf may
# need root (or kernel.perf_event_paranoid <= 1).
set -euo pipefail
cd "$(dirname "$0")/.."

PAIRS=${PAIRS:-6}
PERF=${PERF:-$(command -v perf >/dev/null && echo 1 || echo 0)}

source scripts/benchlib.sh # after the cd above: the repository root

go build -o "$tmp/server-rest" ./server-rest
go build -o "$tmp/barehttp" ./scripts/barehttp

"$tmp/server-rest" --listen 127.0.0.1:0 --machine 1 --data-dir "$tmp/data" 2>"$tmp/rest.log" &
rest_pid=$!
pids+=("$rest_pid")
"$tmp/barehttp" --listen 127.0.0.1:0 --timeouts=false >"$tmp/bare.log" 2>&1 &
bare_pid=$!
pids+=("$bare_pid")
rest=$(wait_for 's/.*msg="vesta: listening" server=rest addr=\([^ ]*\).*/\1/p' "$tmp/rest.log")
bare=$(wait_for 's/^listening \(.*\)$/\1/p' "$tmp/bare.log")

rps() { wrk -t1 -c64 -d"$2" "$1" | awk '/^Requests\/sec:/ {print $2}'; }

rps "http://$rest/genid" 2s >/dev/null # warm both
rps "http://$bare/genid" 2s >/dev/null
ratios=()
for i in $(seq "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then
    r=$(rps "http://$rest/genid" 2s); b=$(rps "http://$bare/genid" 2s)
  else
    b=$(rps "http://$bare/genid" 2s); r=$(rps "http://$rest/genid" 2s)
  fi
  ratios+=("$(awk -v a="$r" -v b="$b" 'BEGIN {printf "%.3f", a/b}')")
  printf 'pair %d: server-rest %.0f req/s, bare %.0f req/s, ratio %s\n' "$i" "$r" "$b" "${ratios[-1]}"
done
printf 'median ratio of %d pairs: %s\n' "$PAIRS" "$(printf '%s\n' "${ratios[@]}" | median)"

[ "$PERF" = 1 ] || exit 0

# profile NAME PID URL: perf record PID for 4 s of a 6 s wrk run against
# URL; prints the run's req/s.
profile() {
  wrk -t1 -c64 -d6s "$3" >"$tmp/wrk-$1.txt" &
  local load=$!
  sleep 1
  perf record -q -e cpu-clock -F 2000 -g -p "$2" -o "$tmp/perf-$1.data" -- sleep 4 >/dev/null 2>&1
  wait "$load"
  awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk-$1.txt"
}

# per_request NAME RPS: CPU ns per request of the frames that make one.
per_request() {
  local total
  total=$(perf report -i "$tmp/perf-$1.data" --stdio 2>/dev/null | awk '/Event count/ {print $NF}')
  printf '%-14s %-40s %8.0f\n' "$1" "all" "$(awk -v t="$total" -v r="$2" 'BEGIN {print t/4/r}')"
  perf report -i "$tmp/perf-$1.data" --stdio --children --sort symbol -g none 2>/dev/null |
    awk -v t="$total" -v r="$2" -v name="$1" '
      $3 == "[.]" && ($4 == "net/http.(*conn).readRequest" || $4 == "net/http.serverHandler.ServeHTTP" ||
        $4 == "net/http.(*conn).setState" || $4 == "net/http.(*response).finishRequest" || $4 == "syscall.write") {
        p = $1; sub("%", "", p); printf "%-14s %-40s %8.0f\n", name, $4, p / 100 * t / 4 / r }'
}

rest_rps=$(profile server-rest "$rest_pid" "http://$rest/genid")
bare_rps=$(profile bare "$bare_pid" "http://$bare/genid")
printf '\nCPU ns per request (perf cpu-clock; server-rest %.0f req/s, bare %.0f req/s while recorded)\n' "$rest_rps" "$bare_rps"
per_request bare "$bare_rps"
per_request server-rest "$rest_rps"
