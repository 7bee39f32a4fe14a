#!/usr/bin/env bash
# The whole test suite: formatting, vet, and every test under the race
# detector. Tests start whatever they need themselves (servers on
# 127.0.0.1 random ports, temp dirs); nothing has to be set up by hand.
# The build tag stress turns on the full multi-million-ID stress runs that
# a plain go test ./... leaves at a smaller size.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(find . -name '*.go' -not -path './dist/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" $unformatted >&2
  exit 1
fi
go vet -tags stress ./...
go test -race -count=1 -tags stress -timeout 45m "$@" ./...
