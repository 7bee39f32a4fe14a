# benchlib.sh: what the wrk-driven REST benchmarks share (bench-rest.sh, bench-secure.sh,
# bench-status.sh). Source it from the repository root: it installs wrk when missing, makes $tmp
# (removed on exit) and stops every pid added to pids on exit.

if ! command -v wrk >/dev/null; then
  echo "installing wrk" >&2
  apt-get update >/dev/null && apt-get install -y wrk >/dev/null
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for PATTERN FILE: print the first match of a sed -n pattern in FILE,
# waiting up to 30 s for it to appear.
wait_for() {
  for _ in $(seq 300); do
    addr=$(sed -n "$1" "$2" | head -n 1)
    if [ -n "$addr" ]; then echo "$addr"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for $2:" >&2
  cat "$2" >&2
  return 1
}

# cpu_ticks PID: user + system clock ticks the process used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# wrk_load URL DURATION PID [TOKEN]: run wrk ($THREADS threads, $CONNS
# connections) against URL, with the token as a Bearer header when given,
# and print "req/s p99 server-CPU-µs-per-request" (PID's CPU over the run);
# fail on any non-2xx answer.
wrk_load() {
  local hdr=() before after out
  if [ -n "${4:-}" ]; then hdr=(-H "Authorization: Bearer $4"); fi
  before=$(cpu_ticks "$3")
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"$2" --latency "${hdr[@]}" "$1")
  after=$(cpu_ticks "$3")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "$out" >&2
    echo "non-2xx answers from $1" >&2
    return 1
  fi
  awk -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" '
    /^Requests\/sec:/ {rps=$2}
    $1=="99%" {p99=$2}
    / requests in / {n=$1}
    END {printf "%s %s %.2f\n", rps, p99, t*1e6/hz/n}' <<<"$out"
}
