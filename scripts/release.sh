#!/usr/bin/env bash
# Builds the binaries a user installs — server-rest, server-rpc and
# vesta-segment (segment tag administration) — for linux and darwin on
# amd64 and arm64 into dist/, statically (CGO_ENABLED=0), with the version
# stamped in, and puts LICENSE beside them. Then runs the binaries built for
# this host with --version to check the stamp.
#
#   scripts/release.sh                 # VERSION from git describe
#   VERSION=v1.2.3 scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
PLATFORMS=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
LDFLAGS="-s -w -X github.com/vesta-go/vesta/internal/buildinfo.Version=$VERSION"

commands=(server-rest server-rpc cmd/vesta-segment)
for dir in "${commands[@]}"; do
  if [ ! -f "$dir/main.go" ]; then
    echo "release: $dir/main.go not found" >&2
    exit 1
  fi
done

mkdir -p dist
cp LICENSE dist/LICENSE
echo "release $VERSION: ${commands[*]} for $PLATFORMS"
for dir in "${commands[@]}"; do
  name=$(basename "$dir")
  for platform in $PLATFORMS; do
    goos=${platform%/*} goarch=${platform#*/}
    out="dist/$name-$VERSION-$goos-$goarch"
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "$LDFLAGS" -o "$out" "./$dir"
    echo "  $out"
  done
done

host="$(go env GOHOSTOS)-$(go env GOHOSTARCH)"
status=0
for dir in "${commands[@]}"; do
  server=$(basename "$dir")
  bin="dist/$server-$VERSION-$host"
  [ -x "$bin" ] || continue
  got=$("$bin" --version)
  if [ "$got" = "$server $VERSION" ]; then
    echo "check: $bin --version: $got"
  else
    echo "check failed: $bin --version printed \"$got\", want \"$server $VERSION\"" >&2
    status=1
  fi
done
(cd dist && sha256sum -- *"-$VERSION-"* >"SHA256SUMS-$VERSION")
echo "checksums: dist/SHA256SUMS-$VERSION"
exit $status
