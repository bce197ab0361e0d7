#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds one variant, optionally installs it. Used by the Docker images and by hand.
#   scripts/build.sh [cpu|cuda|hip] [BUILD_DIR] [--install PREFIX] [--no-deps] [--test] [-DOPTION=VALUE...]
# --no-deps skips the package installation (the Dockerfiles install packages as root first
# with scripts/deps.sh); --test runs ctest after the build.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
variant=cpu dir="" prefix="" deps=1 test=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --install) prefix=$2; shift 2 ;;
    --no-deps) deps=0; shift ;;
    --test) test=1; shift ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    cpu|cuda|hip|asan) variant=$1; shift ;;
    -D*) extra+=("$1"); shift ;;
    *) dir=$1; shift ;;
  esac
done
dir=${dir:-$TSR_ROOT/build/$variant}
if [ $deps -eq 1 ]; then
  # shellcheck disable=SC2046
  tsr_install_packages $(tsr_variant_packages "$variant")
fi
tsr_build_variant "$variant" "$dir" "${extra[@]}"
if [ $test -eq 1 ]; then
  (cd "$dir" && ctest --output-on-failure -j "$TSR_JOBS")
fi
if [ -n "$prefix" ]; then
  cmake --install "$dir" --prefix "$prefix"
fi
