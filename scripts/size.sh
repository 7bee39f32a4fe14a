#!/usr/bin/env bash
# size.sh: what a newcomer and an embedder meet: the modules of the
# repository; per package, lines of non-test Go and exported names (go/doc's
# constants, variables, functions, types, methods, struct fields and
# interface methods: scripts/apisize); the totals, the public surface an
# embedder reads (intf, service, client, service/segment), and the modules
# a fresh module importing service and client lists in go list -m all.
#
#   scripts/size.sh            # every package of every module of the workspace
#   scripts/size.sh ./intf ./client
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || mapfile -t pkgs < <(go list $(go list -m -f '{{.Dir}}/...') | sed "s#^github.com/vesta-go/vesta/#./#")
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
go build -o "$t/apisize" ./scripts/apisize
echo "modules ($(go list -m | wc -l)):"
go list -m -f '  {{.Path}}' 
printf '%-48s %7s %8s\n' package lines exported
total_lines=0; total_names=0; n=0
for p in "${pkgs[@]}"; do
  dir=$(go list -f '{{.Dir}}' "$p")
  lines=$(find "$dir" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cat {} + 2>/dev/null | wc -l)
  names=$("$t/apisize" "$dir" | cut -d' ' -f1)
  printf '%-48s %7d %8d\n' "${p#./}" "$lines" "$names"
  total_lines=$((total_lines+lines)); total_names=$((total_names+names)); n=$((n+1))
done
printf '%-48s %7d %8d\n' "total ($n packages)" "$total_lines" "$total_names"
surface=$("$t/apisize" ./intf ./service ./client ./service/segment | awk '{s+=$1} END {print s}')
echo "public surface (intf, service, client, service/segment): $surface exported names"
cat > "$t/main.go" <<'EOG'
package main

import (
	"context"
	"fmt"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/service"
)

func main() {
	s, err := service.New(context.Background(), service.Settings{Machine: 1, NoDataDir: true})
	fmt.Println(s, err)
	c, err := client.New([]string{"127.0.0.1:1"})
	fmt.Println(c, err)
}
EOG
proj=$(pwd); mod=github.com/vesta-go/vesta
mods=$( (cd "$t" && go mod init example.com/embedder >/dev/null 2>&1 && go mod edit -require "$mod@v0.0.0" -replace "$mod=$proj" \
  && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 && go list -m all | wc -l) || echo "?")
echo "an embedder importing service and client: $mods modules in go list -m all"
