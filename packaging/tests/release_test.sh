#!/usr/bin/env bash
# scripts/release.sh on temporary tags in a temporary clone of the checkout's HEAD: it refuses
# a tag that disagrees with project(VERSION), a missing tag and a dirty tree, and makes
# tessera-<version>.tar.gz (every path under tessera-<version>/) with a .sha256 that
# sha256sum -c accepts, the same bytes on a second run.
#   packaging/tests/release_test.sh [SOURCE_DIR] [WORK_DIR]
# Leaves the tarball in WORK_DIR/out (the EasyBuild test installs from it).
set -euo pipefail
src=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)
work=${2:-$(mktemp -d)}
rm -rf "$work/clone" "$work/out"
mkdir -p "$work/out"
git clone -q --no-hardlinks "$src" "$work/clone"
cd "$work/clone"
version=$(sed -n 's/^project([A-Za-z_]* VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt | head -n 1)
[ -n "$version" ]
fail() { echo "release_test: FAIL: $*"; exit 1; }
# refuses COMMAND... MESSAGE: release.sh exits non-zero and says MESSAGE.
refuses() {
  local want=${*: -1} out
  if out=$("${@:1:$#-1}" 2>&1); then fail "'${*:1:$#-1}' succeeded"; fi
  grep -qF -- "$want" <<<"$out" || fail "'${*:1:$#-1}' said: $out"
  echo "release_test: ok: refused: $out"
}

refuses scripts/release.sh "v$version" "$work/out" "no tag 'v$version'"
git tag v9.8.7
refuses scripts/release.sh v9.8.7 "$work/out" \
  "tag 'v9.8.7' says 9.8.7 but project(VERSION) in its CMakeLists.txt says $version"
git tag "v$version"
echo "local change" >>README.md
refuses scripts/release.sh "v$version" "$work/out" "the working tree has changes"
git checkout -q README.md
touch untracked-file
refuses scripts/release.sh "v$version" "$work/out" "the working tree has changes"
rm untracked-file

scripts/release.sh "v$version" "$work/out"
tarball=$work/out/tessera-$version.tar.gz
(cd "$work/out" && sha256sum -c --quiet "tessera-$version.tar.gz.sha256")
first=$(cut -d' ' -f1 "$tarball.sha256")
listing=$(tar tzf "$tarball")
grep -qx "tessera-$version/CMakeLists.txt" <<<"$listing" || fail "no CMakeLists.txt in the tarball"
grep -qx "tessera-$version/LICENSE" <<<"$listing" || fail "no LICENSE in the tarball"
if grep -qv "^tessera-$version/" <<<"$listing"; then fail "paths outside tessera-$version/"; fi
scripts/release.sh "v$version" "$work/out" >/dev/null
[ "$(cut -d' ' -f1 "$tarball.sha256")" = "$first" ] || fail "a second run gave other bytes"
echo "release_test: passed ($tarball, sha256 $first)"
