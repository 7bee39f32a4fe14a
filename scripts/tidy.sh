#!/usr/bin/env bash
# Tidies every module of the workspace (go.work): the root module, the light
# library an embedder takes, and each nested module with heavy dependencies.
# A nested module requires the other vesta modules at v0.0.0 (go.work makes
# them local); go mod tidy ignores go.work, so each is tidied with
# temporary replace directives to the local folders, removed afterwards, so
# that `go install github.com/vesta-go/vesta/server-rest@version` (which
# refuses replace directives) works once the modules are tagged.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mods=$(go list -m -f '{{.Dir}}' | sed "s#^$root#.#" | grep -vx '\.')
GOWORK=off go mod tidy
for d in $mods; do
  (
    cd "$d"
    rel=$(realpath --relative-to="$root/$d" "$root")
    args=(-replace "github.com/vesta-go/vesta=$rel")
    for o in $mods; do
      [ "$o" = "$d" ] && continue
      args+=(-replace "github.com/vesta-go/vesta/${o#./}=$rel/${o#./}")
    done
    go mod edit "${args[@]}"
    GOWORK=off GOFLAGS=-mod=mod go mod tidy
    # keep only the requires; drop every local replace again
    for r in "${args[@]}"; do [ "$r" = -replace ] || go mod edit -dropreplace "${r%%=*}"; done
  )
done
