#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Makes the release tarball of a tag and its checksum:
#   scripts/release.sh TAG [OUTDIR]
# writes OUTDIR/tessera-<version>.tar.gz (git archive of TAG, every path under
# tessera-<version>/) and OUTDIR/tessera-<version>.tar.gz.sha256 (sha256sum's format, so
# `sha256sum -c` checks it). OUTDIR defaults to the current directory. TAG is vX.Y.Z or X.Y.Z.
# Refuses (exit 1, one line saying why) when the tag does not exist, when its version differs
# from project(VERSION) in the tag's CMakeLists.txt (the version's one source), when the tag's
# CHANGELOG.md has no entry for the version, or when the working tree has changes (tracked or
# untracked files that git does not ignore): a release is made from a clean checkout.
# The recipes (packaging/easybuild, packaging/spack) take the printed sha256.
set -euo pipefail

die() {
  echo "release.sh: $*" >&2
  exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  die "usage: scripts/release.sh TAG [OUTDIR]"
fi
tag=$1
outdir=${2:-.}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
git=(git -C "$root")

"${git[@]}" rev-parse --git-dir >/dev/null 2>&1 || die "$root is not a git checkout"
"${git[@]}" rev-parse -q --verify "refs/tags/$tag" >/dev/null || die "no tag '$tag'"
if [ -n "$("${git[@]}" status --porcelain)" ]; then
  die "the working tree has changes (git status): commit or remove them first"
fi

version=${tag#v}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "tag '$tag' is not vX.Y.Z or X.Y.Z"
# project(Tessera VERSION x.y.z ...) of the tagged tree: the one place the version is written.
cmake_version=$("${git[@]}" show "$tag:CMakeLists.txt" |
  sed -n 's/^project([A-Za-z_]* VERSION \([0-9][0-9.]*\).*/\1/p' | head -n 1)
[ -n "$cmake_version" ] || die "no project(... VERSION x.y.z) in $tag:CMakeLists.txt"
if [ "$cmake_version" != "$version" ]; then
  die "tag '$tag' says $version but project(VERSION) in its CMakeLists.txt says $cmake_version"
fi
"${git[@]}" show "$tag:CHANGELOG.md" 2>/dev/null | grep -q "^## \[$version\]" ||
  die "$tag:CHANGELOG.md has no '## [$version]' entry"

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
name=tessera-$version
tarball=$outdir/$name.tar.gz
# gzip -n: no name or time stamp in the gzip header, so the same tag gives the same bytes.
"${git[@]}" archive --format=tar --prefix="$name/" "$tag" | gzip -n -9 >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
(cd "$outdir" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "release.sh: $tarball"
echo "release.sh: $(cat "$tarball.sha256")"
