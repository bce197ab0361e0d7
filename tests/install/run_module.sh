#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Lmod module file that cmake --install generates (share/modulefiles/tessera/<version>.lua):
# installs into a scratch prefix, loads the module with Lmod, and builds and runs a C program
# with nothing but the module's environment (CPATH and LIBRARY_PATH for a bare cc; pkg-config;
# find_package through CMAKE_PREFIX_PATH); tessera-gemm and tessera-tune are on PATH.
# Exits 77 (skipped) with one line when Lmod is not installed (Debian package lmod).
set -euo pipefail
build=$1 src=$2 work=$3 version=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lmod_init=""
for f in "${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash" /usr/share/lmod/lmod/init/bash \
         /opt/apps/lmod/lmod/init/bash; do
  [ -f "$f" ] && { lmod_init=$f; break; }
done
if [ -z "$lmod_init" ]; then
  echo "install_module: skipped: Lmod not found (Debian: apt-get install lmod)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
modfile=$work/prefix/share/modulefiles/tessera/$version.lua
test -f "$modfile"

# A clean environment: only what the module sets can make the builds below work.
unset CPATH LIBRARY_PATH LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH TESSERA_ROOT
# Lmod's init scripts read unset variables.
set +u
# shellcheck source=/dev/null
source "$lmod_init"
module use "$work/prefix/share/modulefiles"
module load tessera
set -u
loaded=$(module --terse list 2>&1)
grep -q "^tessera/$version$" <<<"$loaded" || { echo "module list: $loaded" >&2; exit 1; }
[ "$TESSERA_ROOT" = "$work/prefix" ] || { echo "TESSERA_ROOT=$TESSERA_ROOT" >&2; exit 1; }
module whatis tessera 2>&1 | grep -q "License: BSD-3-Clause"

tessera-tune --version | grep -qx "tessera-tune $version"
if [ -x "$work/prefix/bin/tessera-gemm" ]; then
  tessera-gemm --version | grep -qx "tessera-gemm $version"
fi
cc -o "$work/app_cc" "$src/main.c" -ltessera -lm
"$work/app_cc"
# shellcheck disable=SC2046
cc -o "$work/app_pc" "$src/main.c" $(pkg-config --cflags --libs tessera) -lm
"$work/app_pc"
cmake -S "$src" -B "$work/cmake-build" >/dev/null
cmake --build "$work/cmake-build" --target consumer >/dev/null
"$work/cmake-build/consumer"

set +u
module unload tessera
set -u
case ":${LD_LIBRARY_PATH:-}:" in *"$work/prefix"*) echo "unload left LD_LIBRARY_PATH" >&2; exit 1 ;; esac
echo "install module test: passed"
