#!/usr/bin/env bash
# bench-fleet.sh [N]: a fleet of N (default 40) real server-rest processes leasing machine ids from
# one etcd process (scripts/soaketcd), default settings, all started at once, measured as a black box:
# time until all serve, distinct ids, etcd writes (revision growth) per node per second over 20 s,
# nodes still issuing 20 s into an etcd outage (SIGSTOP), and a node killed with -9 and restarted on
# its data dir: how soon it serves again and with which id. Everything on 127.0.0.1; needs curl and
# python3. docs/benchmarks.md quotes it.
set -u
N=${1:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
now() { python3 -c 'import time;print(time.time())'; }
(cd "$root" && go build -o "$tmp/server-rest" ./server-rest && go build -o "$tmp/soaketcd" ./scripts/soaketcd) || exit 1
E=$(free_port)
"$tmp/soaketcd" -dir "$tmp/etcd" -port "$E" >"$tmp/etcd.log" 2>&1 & EPID=$!; PIDS+=($EPID)
for _ in $(seq 100); do grep -q ready "$tmp/etcd.log" && break; sleep 0.1; done
rev() { curl -s -X POST "http://127.0.0.1:$E/v3/kv/range" -d '{"key":"eA=="}' | python3 -c 'import json,sys;print(json.load(sys.stdin)["header"]["revision"])'; }
declare -a PORT NODE
start_node() { # start_node I
  mkdir -p "$tmp/n$1"
  "$tmp/server-rest" --listen "127.0.0.1:${PORT[$1]}" --machine-provider etcd --etcd-endpoints "127.0.0.1:$E" \
    --lease-prefix /bench-fleet --lease-node-name "node-$1" --data-dir "$tmp/n$1" >>"$tmp/n$1.log" 2>&1 &
  NODE[$1]=$!; PIDS+=($!)
}
serving() { curl -sf -m 2 -o /dev/null "http://127.0.0.1:${PORT[$1]}/genid"; }
for i in $(seq 1 "$N"); do PORT[$i]=$(free_port); done
t0=$(now)
for i in $(seq 1 "$N"); do start_node "$i"; done
for _ in $(seq 600); do
  up=0; for i in $(seq 1 "$N"); do serving "$i" && up=$((up+1)); done
  [ "$up" = "$N" ] && break; sleep 0.1
done
tup=$(python3 -c "print(f'{$(now)-$t0:.1f}')")
# machine_id I: node I's machine id, from the vesta_machine_id gauge ("?" when it does not answer)
machine_id() { curl -sf -m 2 "http://127.0.0.1:${PORT[$1]}/metrics" | awk '$1=="vesta_machine_id"{print $2; f=1} END{if(!f) print "?"}'; }
for i in $(seq 1 "$N"); do echo "node-$i $(machine_id "$i")"; done >"$tmp/ids"
distinct=$(awk '{print $2}' "$tmp/ids" | grep -v '?' | sort -u | wc -l)
awk '{print $2}' "$tmp/ids" | sort | uniq -d | while read -r m; do echo "machine id $m held by: $(awk -v m="$m" '$2==m{printf "%s ", $1}' "$tmp/ids")"; done
r1=$(rev); sleep 20; r2=$(rev)
wps=$(python3 -c "print(f'{($r2-$r1)/20/$N:.3f}')")
kill -STOP "$EPID"; sleep 20
alive=0; for i in $(seq 1 "$N"); do serving "$i" && alive=$((alive+1)); done
kill -CONT "$EPID"; sleep 5
before=$(machine_id 1)
kill -9 "${NODE[1]}"; wait "${NODE[1]}" 2>/dev/null
t1=$(now); start_node 1
for _ in $(seq 300); do serving 1 && break; sleep 0.05; done
back=$(python3 -c "print(f'{$(now)-$t1:.2f}')")
after=$(machine_id 1)
echo "fleet of $N: all serving after ${tup} s; distinct machine ids $distinct/$N; etcd writes per node per s $wps;" \
  "issuing 20 s into an etcd outage $alive/$N; a node killed with -9 serves again ${back} s after its restart with id $after (was $before)"
