#!/usr/bin/env bash
# Runs every fuzz target for DURATION each (default 30s), one after the
# other, and reports which found failures.
#
#   scripts/fuzz.sh          # 30s per target
#   scripts/fuzz.sh 5m
#
# A plain `go test` runs only the seed corpora (part of scripts/test.sh). A
# failing input is written by Go to <package>/testdata/fuzz/<Target>/; rerun
# it with `go test -run '<Target>/<file>' ./<package>`.
set -uo pipefail
cd "$(dirname "$0")/.."

duration=${1:-30s}
# package target
targets=(
	"./server-rest/internal/restserver FuzzRESTParams"
	"./internal/rpcapi FuzzReceiverArgs"
	"./internal/rpcapi FuzzServerBytes"
	"./internal/config FuzzLoadFile"
	"./internal/config FuzzConfigRoundTrip"
	"./service FuzzMarkFile"
	"./service FuzzMakeExpRoundTrip"
	"./internal/access FuzzBearerToken"
	"./internal/access/authfile FuzzParse"
)

failed=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "=== $name ($pkg) for $duration"
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" "$pkg" >"$log" 2>&1; then
		tail -n 3 "$log" | grep -E 'elapsed|ok' | tail -n 2
	else
		cat "$log"
		failed+=("$name ($pkg)")
	fi
done

echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${#failed[@]} of ${#targets[@]} targets found failures:"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "OK: ${#targets[@]} targets, $duration each, no failure"
