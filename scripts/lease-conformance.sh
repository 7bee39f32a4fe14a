#!/usr/bin/env bash
# lease-conformance.sh: reruns the measurements quoted in docs/operations.md
# ("What an operator may delete", "Restarts"), docs/runbook.md ("Operator
# actions on the coordinator") and docs/security.md (bounded RPC
# connections), and prints the lines that carry the figures.
#
#   scripts/lease-conformance.sh
#
# - The lease conformance suite (service/backend/conformance): every case
#   through the real server-rest under /genid?count=10000 loaders, against
#   an embedded etcd and a throw-away PostgreSQL (from
#   /usr/lib/postgresql/*/bin; its cases skip loudly without one): IDs
#   collected and checked for duplicates, the time a paused holder issued
#   after it ran again, the offline resume's logged and actual time left.
# - A 3-member embedded etcd with each member's client traffic held in
#   turn, and with two members stopped for 8 s at TTL 10 s
#   (service/backend/etcdlease): calls fenced or refused, IDs twice.
# - Four connections without a token pipelining calls at the real
#   server-rpc (server-rpc): its RSS before and after, and the calls a
#   legitimate client made meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
show() { grep -E '^(--- |    --- |ok |FAIL)|_test\.go:[0-9]+: [^ ]' || true; }
go test -count=1 -tags stress -v -run \
  'TestDeletedClaim|TestLostMark|TestRestored|TestWipedFleet|TestLoweredMarks|TestConcurrent|TestLostClaim|TestRestartWhile|TestBorrowBeyond|TestOfflineResume|TestCutOffHolder|TestAnotherLayout|TestFleetLayout' \
  ./service/backend/conformance/ 2>&1 | show
go test -count=1 -tags stress -v -run 'TestThreeMemberClusterWithAHungMember|TestQuorumLossShorterThanTheTTLStopsNoNode' ./service/backend/etcdlease/ 2>&1 | show
go test -count=1 -tags stress -v -run 'TestPipelinedCallsWithoutATokenAreBounded' ./server-rpc/ 2>&1 | show
