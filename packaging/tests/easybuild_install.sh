#!/usr/bin/env bash
# EasyBuild end to end, on the machine's own compiler, Open MPI and OpenBLAS:
#   packaging/tests/easybuild_install.sh SOURCE_DIR WORK_DIR TARBALL
# 1. eb --check-contrib on the committed easyconfigs (packaging/easybuild: style, checksums);
# 2. a SYSTEM-toolchain copy of Tessera-<version>-foss-*.eb (toolchain = SYSTEM instead of foss,
#    the checksum of TARBALL instead of the release's, CMake filtered: --filter-deps), installed
#    from TARBALL (made by scripts/release.sh) into WORK_DIR/eb with its sanity check
#    (tessera-gemm on small random problems, verified);
# 3. module load Tessera (Lmod), then a C program built with the module's environment through
#    pkg-config and through CMake's find_package runs, and tessera-gemm is on PATH.
# Needs eb (EasyBuild, from PyPI) on PATH and Lmod; the caller (scripts/test.d/packaging.sh)
# installs both.
set -euo pipefail
src=$(cd "$1" && pwd) work=$2 tarball=$3
version=$(sed -n 's/^project([A-Za-z_]* VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt" | head -n 1)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-use-as-root-and-accept-consequences)

lmod_init=${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash
[ -f "$lmod_init" ] || lmod_init=/usr/share/lmod/lmod/init/bash
set +u
# shellcheck source=/dev/null
source "$lmod_init"
set -u

echo "easybuild: eb --check-contrib packaging/easybuild/*.eb"
eb --check-contrib "${root_flag[@]}" "$src"/packaging/easybuild/*.eb 2>&1 |
  grep -E '^\[(PASS|FAIL)\]|^>>|ERROR|E[0-9]{3}|W[0-9]{3}' || true
eb --check-contrib "${root_flag[@]}" "$src"/packaging/easybuild/*.eb >/dev/null 2>&1

rm -rf "$work/eb" "$work/ec" "$work/consumer"
mkdir -p "$work/ec" "$work/eb"
foss=""
for f in "$src"/packaging/easybuild/Tessera-"$version"-foss-*.eb; do
  [[ $f == *-CUDA-* ]] || { foss=$f; break; }
done
[ -n "$foss" ] || { echo "easybuild: no Tessera-$version-foss-*.eb"; exit 1; }
ec=$work/ec/Tessera-$version.eb
sha=$(sha256sum "$tarball" | cut -d' ' -f1)
sed -e "s/^toolchain = .*/toolchain = SYSTEM/" -e "/^toolchainopts = /d" \
    -e "s/^checksums = .*/checksums = ['$sha']/" "$foss" >"$ec"
grep -q "^toolchain = SYSTEM$" "$ec"
echo "easybuild: eb $(basename "$ec") (from $(basename "$foss"), toolchain SYSTEM)"
log=$work/eb-install.log
if ! eb "$ec" "${root_flag[@]}" --prefix="$work/eb" --sourcepath="$(dirname "$tarball")" \
     --filter-deps=CMake --max-parallel="${TSR_JOBS:-2}" --disable-cleanup-tmpdir \
     --tmpdir="$work/tmp" >"$log" 2>&1; then
  tail -n 40 "$log"
  find "$work/tmp" -name 'easybuild-*.log' -exec tail -n 60 {} + 2>/dev/null | tail -n 60
  echo "easybuild: eb failed (log: $log)"
  exit 1
fi
grep -E "sanity check|COMPLETED|Build succeeded" "$log" | sed 's/^/easybuild: /'

# A clean environment: only the module may make the builds below work.
unset CPATH LIBRARY_PATH LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
set +u
module use "$work/eb/modules/all"
module load Tessera
set -u
echo "easybuild: module load Tessera: $(module --terse list 2>&1 | tr '\n' ' ')"
command -v tessera-gemm >/dev/null
tessera-gemm --version
tessera-gemm -m 50 -n 40 -k 30 --verify >"$work/gemm.out"
mkdir -p "$work/consumer"
# shellcheck disable=SC2046
cc -o "$work/consumer/app_pc" "$src/tests/install/consumer/main.c" \
  $(pkg-config --cflags --libs tessera) -lm
"$work/consumer/app_pc"
cmake -S "$src/tests/install/consumer" -B "$work/consumer/cmake" >/dev/null
cmake --build "$work/consumer/cmake" --target consumer >/dev/null
"$work/consumer/cmake/consumer"
echo "easybuild: passed"
