#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build tree into a scratch prefix, then builds and runs consumers against it:
# C with find_package(Tessera CONFIG) (shared and static) and with a Makefile using pkg-config;
# C++ from a CXX-only CMake project (tessera.h, and tessera/dist.h in MPI builds) and with
# g++ $(pkg-config --cflags --libs tessera); C with plain cc -I -L -ltessera (no MPI flags).
# The pkg-config builds run without LD_LIBRARY_PATH (tessera.pc's -Wl,-rpath).
set -euo pipefail
build=$1 src=$2 work=$3
cxx_src=$(dirname "$src")/consumer_cxx
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -n 1)
test -f "$libdir/cmake/Tessera/TesseraConfig.cmake"
test -f "$libdir/pkgconfig/tessera.pc"
# (A pipe into grep -q is not used: under pipefail the writer's SIGPIPE, when grep quits at the
# first match, fails the test at random.)
has() { local out; out=$("${@:2}") && grep -q -- "$1" <<<"$out"; }
has 'SONAME.*libtessera\.so\.0' readelf -d "$libdir/libtessera.so"
# The drop-ins depend on the installed libtessera (one runtime per process) and find it beside
# them without LD_LIBRARY_PATH (RUNPATH $ORIGIN), also when preloaded into another program.
for dropin in libtessera_blas.so libtessera_scalapack.so; do
  [ -f "$libdir/$dropin" ] || continue
  has 'NEEDED.*\[libtessera\.so\.0\]' readelf -d "$libdir/$dropin"
  has 'R.*PATH.*\[\$ORIGIN\]' readelf -d "$libdir/$dropin"
  has "libtessera\.so\.0 => $libdir/\?libtessera\.so\.0" env -u LD_LIBRARY_PATH ldd "$libdir/$dropin"
  env -u LD_LIBRARY_PATH LD_PRELOAD="$libdir/$dropin" true
done

cmake -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$work/cmake-build/consumer"
"$work/cmake-build/consumer_static"

cp "$src/main.c" "$src/Makefile" "$work/"
PKG_CONFIG_PATH="$libdir/pkgconfig" make -s -C "$work" consumer_pc
env -u LD_LIBRARY_PATH "$work/consumer_pc"

# C++, CMake: a project with LANGUAGES CXX only.
cmake -S "$cxx_src" -B "$work/cxx-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cxx-build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$work/cxx-build/consumer_cxx"
if [ -x "$work/cxx-build/consumer_cxx_dist" ]; then
  # Open MPI's C++ bindings are not linked (MPI::MPI_C's interface, OMPI_SKIP_MPICXX).
  if has 'libmpi_cxx' readelf -d "$work/cxx-build/consumer_cxx_dist"; then
    echo "consumer_cxx_dist links MPI's C++ bindings" >&2
    exit 1
  fi
  LD_LIBRARY_PATH="$libdir" "$work/cxx-build/consumer_cxx_dist"
fi

# C++, pkg-config: tessera.h needs no MPI flags; the rpath finds libtessera.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
g++ -o "$work/consumer_cxx_pc" "$cxx_src/main.cpp" $(pkg-config --cflags --libs tessera)
env -u LD_LIBRARY_PATH "$work/consumer_cxx_pc"
if [ -f "$libdir/pkgconfig/tessera-mpi.pc" ]; then
  # shellcheck disable=SC2046
  g++ -o "$work/consumer_cxx_dist_pc" "$cxx_src/dist.cpp" $(pkg-config --cflags --libs tessera-mpi)
  env -u LD_LIBRARY_PATH "$work/consumer_cxx_dist_pc"
fi
unset PKG_CONFIG_PATH

# C without any MPI flag: tessera.h does not include mpi.h.
cc -o "$work/consumer_cc" "$src/main.c" -I"$work/prefix/include" -L"$libdir" -ltessera -lm
LD_LIBRARY_PATH="$libdir" "$work/consumer_cc"
echo "install consumer test: passed"
