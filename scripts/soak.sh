#!/usr/bin/env bash
# Soak: REST + RPC load on a small fleet with faults injected, checking that
# no ID is issued twice.
#
#   scripts/soak.sh [DURATION] [soak flags...]     # DURATION default 2m
#   scripts/soak.sh 10m
#   scripts/soak.sh 5m -rest 2 -rpc 2 -kill-every 20s
#
# Builds server-rest, server-rpc, an embedded etcd (scripts/soaketcd) and the
# driver (scripts/soak) into a temp dir, then runs the driver, which starts
# on 127.0.0.1: etcd, a throw-away PostgreSQL (initdb + pg_ctl from
# /usr/lib/postgresql/*/bin; without it the PostgreSQL faults and segment
# load are skipped, loudly), 3 server-rest and 2 server-rpc nodes with
# leased machine ids (--machine-provider etcd) and segment mode on the
# shared PostgreSQL. For DURATION it drives /genid and /segment/soak over
# HTTP and GenIds/NextIds over the RPC client, while it kills -9 a random
# node every 30 s (restarted on the same data dir), stops etcd (SIGSTOP)
# for 10 s every 2 min and restarts PostgreSQL (-m immediate) every 3 min.
# It prints the IDs issued by kind, the duplicates (exit 1 if any), the
# errors by kind, every node's RSS at the start and the end, and the faults.
# `go run ./scripts/soak -h` lists the driver's flags.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-2m}
[ $# -gt 0 ] && shift

work=$(mktemp -d "${TMPDIR:-/tmp}/vesta-soak.XXXXXX")
driver=
cleanup() {
	if [ -n "$driver" ] && kill -0 "$driver" 2>/dev/null; then
		kill -TERM "$driver" 2>/dev/null || true
		wait "$driver" 2>/dev/null || true
	fi
	# A PostgreSQL left running (the driver was killed): stop it.
	if [ -f "$work/run/pg/data/postmaster.pid" ]; then
		pgctl=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/pg_ctl
		if [ "$(id -u)" = 0 ]; then
			runuser -u postgres -- "$pgctl" -D "$work/run/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
		else
			"$pgctl" -D "$work/run/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
		fi
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building into $work/bin ..."
mkdir -p "$work/bin" "$work/run"
chmod 755 "$work" "$work/run" # PostgreSQL runs as the postgres user when we are root
go build -o "$work/bin/server-rest" ./server-rest
go build -o "$work/bin/server-rpc" ./server-rpc
go build -o "$work/bin/soaketcd" ./scripts/soaketcd
go build -o "$work/bin/soak" ./scripts/soak

echo "soak: $duration on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)"
"$work/bin/soak" -bin "$work/bin" -dir "$work/run" -duration "$duration" "$@" &
driver=$!
set +e
wait "$driver"
rc=$?
set -e
driver=
exit $rc
