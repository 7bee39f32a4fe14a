#!/usr/bin/env bash
# tag-release.sh VERSION: makes a release of every module of the repository
# on a clean checkout, in one commit and one tag per module.
#
#   scripts/tag-release.sh v1.4.0
#   git push origin main $(git tag --points-at HEAD)   # then publish it
#
# What it does (docs/modules.md, "Releasing"):
#   1. every nested module's requirements of the other vesta modules move
#      to VERSION (go mod edit), in the order they require each other;
#   2. each such module's go.sum gets the hashes the module proxy will
#      serve for those modules at VERSION (scripts/modsum), so that
#      `go install github.com/vesta-go/vesta/server-rest@VERSION` works;
#   3. go.work's replace lines move to VERSION, so the workspace keeps
#      building from the folders;
#   4. the workspace builds, then one commit "release VERSION" and the tags:
#      VERSION for the root module, DIR/VERSION for each nested one.
# It changes nothing and exits 1 when the checkout is not clean, VERSION is
# not a semantic version or one of its tags exists.
set -euo pipefail
editing=0
die() {
  echo "tag-release: $*" >&2
  if [ "$editing" = 1 ]; then # put the checkout back as it was: nothing half-released
    git checkout -q -- . && echo "tag-release: the checkout is restored; nothing was committed or tagged" >&2
  fi
  exit 1
}
trap 'die "a step failed (line $LINENO)"' ERR
[ $# -eq 1 ] || die "usage: scripts/tag-release.sh VERSION (e.g. v1.4.0)"
V=$1
[[ $V =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  die "VERSION $V is not a semantic version like v1.4.0"
[[ $V =~ ^v[01]\. ]] || die "VERSION $V: a major version above 1 needs /vN module paths first"
cd "$(dirname "$0")/.."
root=$(pwd)
[ -z "$(git status --porcelain)" ] || die "the checkout has uncommitted changes: commit or stash them first"
base=github.com/vesta-go/vesta

# The modules: path and folder, root first (go.work's use lines).
declare -A dir_of
mods=()
while read -r path dir; do
  rel=${dir#"$root"}; rel=${rel#/}; rel=${rel:-.}
  dir_of[$path]=$rel
  mods+=("$path")
done < <(go list -m -f '{{.Path}} {{.Dir}}')
tags=()
for m in "${mods[@]}"; do
  d=${dir_of[$m]}
  t=$V; [ "$d" != . ] && t="$d/$V"
  git rev-parse -q --verify "refs/tags/$t" >/dev/null && die "tag $t exists already"
  tags+=("$t")
done

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/modsum" ./scripts/modsum
editing=1

# requires M: the vesta modules M's go.mod lists (direct and indirect).
requires() {
  (cd "${dir_of[$1]}" && go mod edit -json) >"$tmp/mod.json" || die "go mod edit -json in ${dir_of[$1]}"
  python3 -c 'import json,sys; [print(r["Path"]) for r in json.load(sys.stdin).get("Require") or [] if r["Path"] == sys.argv[1] or r["Path"].startswith(sys.argv[1] + "/")]' "$base" <"$tmp/mod.json"
}

# 3 first: go.work sits in the root module, whose hash the others record.
go work edit -json >"$tmp/work.json"
replaces=$(python3 -c 'import json,sys
for r in json.load(sys.stdin).get("Replace") or []:
    if r["Old"]["Path"] == sys.argv[1] or r["Old"]["Path"].startswith(sys.argv[1] + "/"):
        print(r["Old"]["Path"] + ("@" + r["Old"]["Version"] if r["Old"].get("Version") else ""), r["New"]["Path"])' "$base" <"$tmp/work.json")
while read -r old dir; do
  [ -n "$old" ] || continue
  go work edit -dropreplace="$old" -replace="${old%@*}@$V=$dir"
done <<<"$replaces"

# 1 and 2, a module after every module it requires: its go.sum records
# their final contents.
declare -A done_
done_[$base]=1
left=("${mods[@]:1}")
while [ ${#left[@]} -gt 0 ]; do
  next=()
  for m in "${left[@]}"; do
    ready=1; deps=()
    reqs=$(requires "$m") || die "reading the requirements of $m"
    for r in $reqs; do
      [ -n "${dir_of[$r]:-}" ] || die "$m requires $r, which is not a module of this repository"
      [ -n "${done_[$r]:-}" ] || ready=0
      deps+=("$r")
    done
    if [ $ready = 0 ]; then next+=("$m"); continue; fi
    d=${dir_of[$m]}
    args=(); dirs=()
    for r in "${deps[@]}"; do args+=("-require=$r@$V"); dirs+=("$root/${dir_of[$r]}"); done
    if [ ${#args[@]} -gt 0 ]; then
      (cd "$d" && go mod edit "${args[@]}")
      touch "$d/go.sum"
      grep -v "^$base[/ ]" "$d/go.sum" > "$tmp/go.sum" || true
      (cd "$d" && "$tmp/modsum" "$V" "${dirs[@]}") >> "$tmp/go.sum"
      LC_ALL=C sort -o "$d/go.sum" "$tmp/go.sum"
    fi
    done_[$m]=1
  done
  [ ${#next[@]} -lt ${#left[@]} ] || die "the modules require each other in a loop: ${next[*]}"
  left=("${next[@]}")
done

# 4
patterns=(); for m in "${mods[@]}"; do patterns+=("./${dir_of[$m]}/..."); done
go build "${patterns[@]}" || die "the release does not build in the workspace"
git add -A
git commit -q -m "release $V"
for t in "${tags[@]}"; do git tag "$t"; done
echo "release $V: commit $(git rev-parse --short HEAD), ${#tags[@]} tags: ${tags[*]}"
echo "publish: git push origin HEAD ${tags[*]}"
