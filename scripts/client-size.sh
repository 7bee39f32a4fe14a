#!/usr/bin/env bash
# How light the plain RPC client is: builds sample/rpc-client (package
# client over TLS, as a program would use it) and scripts/barerpc (a TLS
# connection and one net/rpc call, nothing else) with the same toolchain,
# prints both binary sizes, and lists the third-party modules package client
# links (none is the goal: the go-plugin glue lives in server-rpc/rpcplugin).
#
#   scripts/client-size.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rpc-client" ./sample/rpc-client
go build -o "$tmp/barerpc" ./scripts/barerpc
go build -ldflags='-s -w' -o "$tmp/rpc-client-stripped" ./sample/rpc-client
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
third=$(go list -deps -f '{{with .Module}}{{.Path}}{{end}}' ./client | { grep -v '^github.com/vesta-go/vesta$' || true; } | sort -u | tr '\n' ' ')
echo "$(go version)"
echo "sample/rpc-client:                $(mb "$tmp/rpc-client")"
echo "sample/rpc-client, -ldflags=-s -w: $(mb "$tmp/rpc-client-stripped")"
echo "scripts/barerpc (net/rpc + TLS):  $(mb "$tmp/barerpc")"
echo "third-party modules of ./client:  ${third:-none}"
