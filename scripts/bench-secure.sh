#!/usr/bin/env bash
# What TLS and tokens cost, and what quotas buy, measured on server-rest.
#
# 1. Overhead: four server-rest processes side by side — plain, tokens
#    (an auth file), TLS, TLS + tokens — loaded in turn with wrk on
#    /genid (keep-alive connections, so TLS costs its record layer, not a
#    handshake per request), ROUNDS rounds alternating; prints req/s, p99
#    and server CPU per request of every run and the median ratio of each
#    to plain, in req/s and in CPU per request (which the other load on a
#    shared machine disturbs far less: wrk and the servers share the cores).
# 2. Fairness: a client drives /genid?count=10000 from 16 connections as
#    fast as it can (ignoring Retry-After) while a second client sends 200
#    /genid a second; prints the second client's errors and latency
#    percentiles — with tokens and a quota on the heavy client
#    (HEAVY_RATE IDs/s), then on the plain server without any, for
#    comparison.
#
#   scripts/bench-secure.sh                     # 3 rounds x 10 s, 2 threads, 64 connections
#   ROUNDS=5 DURATION=20s FAIR_DURATION=20s scripts/bench-secure.sh
#
# All traffic stays on 127.0.0.1; the servers are stopped on exit.
# Installs wrk with apt-get when it is missing (run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
FAIR_DURATION=${FAIR_DURATION:-10s} # whole seconds
HEAVY_RATE=${HEAVY_RATE:-200000} # the rate of the issue's example auth file

source scripts/benchlib.sh # after the cd above: the repository root

go build -o "$tmp/server-rest" ./server-rest
go build -o "$tmp/securebench" ./scripts/securebench
"$tmp/securebench" setup --dir "$tmp" --heavy-rate "$HEAVY_RATE"
bench_token=$(cat "$tmp/bench.token")

# serve NAME MACHINE ARGS...: start a server-rest; sets NAME_addr and NAME_pid.
serve() {
  local name=$1 machine=$2
  shift 2
  "$tmp/server-rest" --listen 127.0.0.1:0 --machine "$machine" --data-dir "$tmp/data-$name" --segment-store off \
    "$@" 2>"$tmp/$name.log" &
  pids+=("$!")
  printf -v "${name}_pid" '%s' "$!"
  printf -v "${name}_addr" '%s' "$(wait_for 's/.*msg="vesta: listening" server=rest addr=\([^ ]*\).*/\1/p' "$tmp/$name.log")"
}
serve plain 1
serve auth 2 --auth-file "$tmp/auth.yaml"
serve tls 3 --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem"
serve tlsauth 4 --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem" --auth-file "$tmp/auth.yaml"
for pair in "http://$plain_addr" "http://$auth_addr" "https://$tls_addr" "https://$tlsauth_addr"; do
  for _ in $(seq 300); do
    curl -fsk "$pair/readyz" >/dev/null && break
    sleep 0.1
  done
done


# load URL DURATION PID [TOKEN]: wrk against the server PID (wrk_load).
load() { wrk_load "$@"; }


names=(plain auth tls tlsauth)
labels=("plain HTTP" "tokens (auth file)" "TLS" "TLS + tokens")
urls=("http://$plain_addr/genid" "http://$auth_addr/genid" "https://$tls_addr/genid" "https://$tlsauth_addr/genid")
server_pids=("$plain_pid" "$auth_pid" "$tls_pid" "$tlsauth_pid")
tokens=("" "$bench_token" "" "$bench_token")

echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency on /genid, $ROUNDS rounds, alternating"
for i in 0 1 2 3; do load "${urls[$i]}" 2s "${server_pids[$i]}" "${tokens[$i]}" >/dev/null; done # warm-up

printf '\n| round | server | req/s | p99 | server CPU µs/req |\n|---|---|---:|---:|---:|\n'
declare -A rps_all ratio_all cpu_all cpu_ratio_all
for r in $(seq "$ROUNDS"); do
  declare -A rps cpu
  for i in 0 1 2 3; do
    read -r rps[$i] p99 cpu[$i] < <(load "${urls[$i]}" "$DURATION" "${server_pids[$i]}" "${tokens[$i]}")
    printf '| %d | %s | %.0f | %s | %s |\n' "$r" "${labels[$i]}" "${rps[$i]}" "$p99" "${cpu[$i]}"
    rps_all[$i]+="${rps[$i]} "
    cpu_all[$i]+="${cpu[$i]} "
  done
  for i in 1 2 3; do
    ratio_all[$i]+="$(awk -v a="${rps[$i]}" -v b="${rps[0]}" 'BEGIN {printf "%.3f", a/b}') "
    cpu_ratio_all[$i]+="$(awk -v a="${cpu[0]}" -v b="${cpu[$i]}" 'BEGIN {printf "%.3f", a/b}') "
  done
done
echo
for i in 0 1 2 3; do
  printf 'median %-20s req/s %.0f, server CPU µs/req %s' "${labels[$i]}:" \
    "$(tr ' ' '\n' <<<"${rps_all[$i]}" | grep . | median)" "$(tr ' ' '\n' <<<"${cpu_all[$i]}" | grep . | median)"
  if [ "$i" -gt 0 ]; then
    printf ', ratio to plain %s (per round: %s), CPU-efficiency ratio plain/it %s (per round: %s)' \
      "$(tr ' ' '\n' <<<"${ratio_all[$i]}" | grep . | median)" "${ratio_all[$i]}" \
      "$(tr ' ' '\n' <<<"${cpu_ratio_all[$i]}" | grep . | median)" "${cpu_ratio_all[$i]}"
  fi
  echo
done

echo
echo "fairness: heavy client /genid?count=10000 x 16 connections (Retry-After ignored), light client 200 /genid/s, $FAIR_DURATION"
# fair URL HEAVY_TOKEN LIGHT_TOKEN: the heavy client in the background, the
# light one measuring once the heavy load is on.
fair() {
  secs=${FAIR_DURATION%s}
  "$tmp/securebench" heavy --url "$1" --token "$2" --duration "$((secs + 2))s" >"$tmp/heavy.out" &
  heavy_pid=$!
  sleep 1
  "$tmp/securebench" light --url "$1" --token "$3" --duration "$FAIR_DURATION"
  wait "$heavy_pid"
  cat "$tmp/heavy.out"
}
echo "with tokens, heavy quota $HEAVY_RATE IDs/s (burst $((HEAVY_RATE / 10))):"
fair "http://$auth_addr" "$tmp/heavy.token" "$tmp/light.token"
echo "the same load on the plain server (no tokens, no quota):"
fair "http://$plain_addr" "" ""
waits=$(curl -fs "http://$plain_addr/metrics" | awk '/^vesta_sequence_exhaustion_waits_total/ {print $2}')
echo "sequence exhaustion waits on the plain server: $waits"
