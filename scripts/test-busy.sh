#!/usr/bin/env bash
# The whole suite on a busy machine: RUNS times in a row (default 3), each
# on a fresh clone of HEAD, `CI=true bash .ci/run` (the README's test
# command) with HOGS CPU-bound processes beside it (default 2: `yes >
# /dev/null`), as CI may meet on a shared 2-core machine. It prints one
# line a run (exit code, seconds) and exits non-zero when any run failed;
# each run's output is kept in the temp dir it names.
#
#   scripts/test-busy.sh
#   RUNS=1 HOGS=4 scripts/test-busy.sh
set -uo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
HOGS=${HOGS:-2}
work=$(mktemp -d)
echo "test-busy: $RUNS runs of .ci/run on clones of $(git rev-parse --short HEAD), $HOGS CPU hogs beside; logs in $work"
hogs=()
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
for _ in $(seq "$HOGS"); do
  yes >/dev/null &
  hogs+=($!)
done
failed=0
for i in $(seq "$RUNS"); do
  git clone -q . "$work/clone$i"
  start=$(date +%s)
  (cd "$work/clone$i" && CI=true bash .ci/run) >"$work/run$i.log" 2>&1
  rc=$?
  echo "run $i: exit $rc in $(( $(date +%s) - start )) s ($work/run$i.log)"
  [ "$rc" = 0 ] || failed=1
  rm -rf "$work/clone$i"
done
exit "$failed"
