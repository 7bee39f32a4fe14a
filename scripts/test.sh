#!/usr/bin/env bash
# The whole test suite: formatting, vet, and every test under the race
# detector. Tests start whatever they need themselves (servers on
# 127.0.0.1 random ports, temp dirs); nothing has to be set up by hand.
# Every module of the workspace is tested (go.work lists them).
# The build tag stress turns on the full multi-million-ID stress runs that
# a plain go test ./... leaves at a smaller size.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every module of the workspace (go.work): the light root module and each
# nested one. From the root, ./... is the root module alone.
mapfile -t all < <(go list -m -f '{{.Dir}}/...')

unformatted=$(gofmt -l $(find . -name '*.go' -not -path './dist/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" $unformatted >&2
  exit 1
fi
go vet -tags stress "${all[@]}"

# Install what some tests need when missing and apt-get can (as root, or
# with password-less sudo); a failure here only means those tests skip,
# loudly: Chromium for the status page's browser test (server-rest,
# TestStatusPageInABrowser), PostgreSQL for every test of a PostgreSQL
# store or lease (service/backend/pgtest looks under /usr/lib/postgresql/*/bin).
install() { # install PACKAGE WHAT-SKIPS-WITHOUT-IT
  command -v apt-get >/dev/null 2>&1 || { echo "test.sh: no apt-get to install $1: $2 will skip" >&2; return; }
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "test.sh: no $1 and no root to install it: $2 will skip" >&2; return
    fi
  fi
  echo "test.sh: installing $1 (apt-get) for $2" >&2
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1"; } >&2 ||
    echo "test.sh: installing $1 failed: $2 will skip" >&2
}
have_chromium() { command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1
have_chromium || install chromium "the status page's browser test"
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || install postgresql "the PostgreSQL tests"
go test -race -count=1 -tags stress -timeout 45m "$@" "${all[@]}"
