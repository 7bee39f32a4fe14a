#!/usr/bin/env bash
# Segment IDs at hardware speed, and client-side ranges (docs/segment.md#client-side-ranges).
# Prints, each measured side by side in one run (the machine is shared: ratios, medians of COUNT):
#   1. embedded Generator.NextId and a per-tag handle's Sequence.Next from a loaded range vs a bare
#      atomic.Int64.Add, serial and with 64 goroutines (BenchmarkSegment/sqlite/NextId and /Seq,
#      BenchmarkBareAtomic, service/backend/stores/generatorsuite);
#   2. the Go client's NextSegmentId from a range it holds vs a bare atomic, and vs one RPC per ID
#      (BenchmarkClientRanges, client);
#   3. a sustained run through a real server-rpc (SQLite) on a tag whose step starts at 1,000:
#      64 callers for DURATION with client.WithSegmentRanges: IDs per second, the rate after the
#      first second against the single-range rate (a tag whose one range lasts the whole run), how
#      often callers waited for a range, and the per-call RPC rate it replaces (scripts/segload).
#
#   scripts/bench-segment-range.sh            # BENCHTIME=2s COUNT=3 DURATION=10s
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHTIME=${BENCHTIME:-2s}
COUNT=${COUNT:-3}
DURATION=${DURATION:-10s}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# median of the ns/op of the benchmark lines matching $1 in $2
med() { grep -E "$1" "$2" | awk '{for (i = 1; i < NF; i++) if ($(i+1) == "ns/op") print $i}' | sort -g |
  awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)
echo "Machine: ${cpu:-unknown CPU}, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | awk '{print $3}')"
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Command: scripts/bench-segment-range.sh (BENCHTIME=$BENCHTIME COUNT=$COUNT DURATION=$DURATION)"
echo

seg="$tmp/seg.txt"
go test -run '^$' -bench 'Segment/sqlite/(NextId|Seq)/(serial|parallel)$|BareAtomic' -benchtime "$BENCHTIME" -count "$COUNT" ./service/backend/stores/generatorsuite/ >"$seg"
s1=$(med 'Segment/sqlite/NextId/serial-' "$seg"); sp=$(med 'Segment/sqlite/NextId/parallel-' "$seg")
q1=$(med 'Segment/sqlite/Seq/serial-' "$seg"); qp=$(med 'Segment/sqlite/Seq/parallel-' "$seg")
a1=$(med 'BareAtomic/serial-' "$seg"); ap=$(med 'BareAtomic/parallel-' "$seg")
echo "1. embedded, loaded range: NextId ${s1} / ${sp} ns, Sequence.Next ${q1} / ${qp} ns (serial / 64 goroutines); bare atomic ${a1} / ${ap} ns"
echo "   ratio (atomic / NextId): serial $(ratio "$a1" "$s1"), 64 goroutines $(ratio "$ap" "$sp")"
echo "   ratio (atomic / Sequence.Next): serial $(ratio "$a1" "$q1") (goal >= 0.8), 64 goroutines $(ratio "$ap" "$qp") (goal >= 0.5)"

cl="$tmp/client.txt"
go test -run '^$' -bench 'ClientRanges' -benchtime "$BENCHTIME" -count "$COUNT" ./client/ >"$cl"
c1=$(med 'NextSegmentId/serial-' "$cl"); cp=$(med 'NextSegmentId/parallel-' "$cl")
b1=$(med 'BareAtomic/serial-' "$cl"); bp=$(med 'BareAtomic/parallel-' "$cl")
r1=$(med 'PerCall/serial-' "$cl"); rp=$(med 'PerCall/parallel-' "$cl")
echo "2. client NextSegmentId (range held): ${c1} ns serial, ${cp} ns with 64 goroutines; bare atomic ${b1} / ${bp} ns;"
echo "   one RPC per ID: ${r1} / ${rp} ns"
echo "   ratio (atomic / NextSegmentId): serial $(ratio "$b1" "$c1"), 64 goroutines $(ratio "$bp" "$cp");"
echo "   ranges vs one RPC per ID: serial $(ratio "$r1" "$c1")x, 64 goroutines $(ratio "$rp" "$cp")x"

go build -o "$tmp/server-rpc" ./server-rpc
go build -o "$tmp/segload" ./scripts/segload
"$tmp/server-rpc" --listen 127.0.0.1:0 --data-dir "$tmp/data" --machine 1 \
  --segment-tags load:1:1000,single:1:2000000000,percall:1:1000 2>"$tmp/server.log" &
pids+=($!)
addr=""
for _ in $(seq 300); do
  addr=$(sed -n 's/.*vesta: listening.* server=rpc addr=\([^ ]*\).*/\1/p' "$tmp/server.log" | head -n 1)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { cat "$tmp/server.log" >&2; exit 1; }
single=$("$tmp/segload" --addrs "$addr" --tag single --ranges --duration 3s)
load=$("$tmp/segload" --addrs "$addr" --tag load --ranges --duration "$DURATION")
percall=$("$tmp/segload" --addrs "$addr" --tag percall --duration 3s)
python3 - "$single" "$load" "$percall" <<'PY'
import json, sys
single, load, percall = (json.loads(a) for a in sys.argv[1:4])
after = load["perSecond"][1:]
rate_after = sum(after) / len(after) if after else 0
print(f"3. sustained {load['seconds']:.0f} s through server-rpc (SQLite), 64 callers, tag step 1,000, client ranges up to 10,000,000:")
print(f"   IDs per second: {', '.join(f'{x/1e6:.1f} M' for x in load['perSecond'])}")
print(f"   after the first second {rate_after/1e6:.1f} M/s; single-range rate {single['rate']/1e6:.1f} M/s: ratio {rate_after/single['rate']:.2f} (goal >= 0.5)")
print(f"   callers waited for a range {load['waits']} times ({load['waits']/max(load['ids'],1)*1e6:.2f} per million IDs); last range {load['step']:,} IDs;"
      f" failed calls {load['errors']}{' (' + load['firstError'] + ')' if load['errors'] else ''}; not increasing {load['notIncreasing']}")
print(f"   one RPC per ID (same server, 64 callers): {percall['rate']:,.0f} IDs/s; ranges replace it {rate_after/percall['rate']:,.0f}x (goal >= 100x)")
PY
