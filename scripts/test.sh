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

# The status page's browser test (server-rest, TestStatusPageInABrowser)
# drives headless Chromium; it skips loudly without one. Install it when
# missing and apt-get can (as root, or with password-less sudo); a failure
# here only means that test skips.
have_chromium() { command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1
if ! have_chromium && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo="none"; fi
  fi
  if [ "$sudo" = none ]; then
    echo "test.sh: no Chromium and no root to install it: the status page's browser test will skip" >&2
  else
    echo "test.sh: installing Chromium for the status page's browser test (apt-get)" >&2
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium; } >&2 ||
      echo "test.sh: installing Chromium failed: the status page's browser test will skip" >&2
  fi
fi
go test -race -count=1 -tags stress -timeout 45m "$@" ./...
