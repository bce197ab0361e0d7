#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian/Ubuntu packages a variant needs (as root, or through sudo).
#   scripts/deps.sh [--strict] [--without-mpi] [cpu|cuda|hip|asan] [extra packages...]
# --strict: every package must install, else exit 1 naming the missing ones (the Docker
#   images; CI's default only warns, and also installs the tools of its hooks).
# --without-mpi: leave out the distribution's Open MPI and the ScaLAPACK linked against it
#   (an image that builds its own MPI).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    --strict) TSR_STRICT_PACKAGES=1; shift ;;
    --without-mpi) TSR_WITHOUT_MPI=1; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    -*) echo "deps.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
variant=${1:-cpu}
[ $# -gt 0 ] && shift
packages=$(tsr_variant_packages "$variant") || exit 2
# shellcheck disable=SC2086
tsr_install_packages $packages "$@"
