#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs a consumer project
# against it twice: with find_package(Tessera CONFIG) and with a Makefile using pkg-config.
set -euo pipefail
build=$1 src=$2 work=$3
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
LD_LIBRARY_PATH="$libdir" "$work/consumer_pc"
echo "install consumer test: passed"
