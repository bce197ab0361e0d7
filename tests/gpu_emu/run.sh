#!/usr/bin/env bash
# Runs GPU test programs against the GPU backend's own kernels executed on the host by a
# small CUDA emulator (tsr_emu.h/.cpp: the threads of a block are fibers run round-robin,
# released together at __syncthreads and per warp at shuffles; host memory is device memory;
# prep.py rewrites the <<<...>>> launches). It checks the kernels' indexing, tiling, vector paths and reductions,
# with a warp of 32 or a wavefront of 64, on a machine without a GPU. It is slow (minutes)
# and blind to what only hardware shows (memory spaces, timing, real scheduling), so it is a
# development aid, not a CTest test and not a substitute for a GPU run.
#
#   tests/gpu_emu/run.sh CUDA_BUILD_DIR [WARP] [TEST...]
# CUDA_BUILD_DIR: a built -DTESSERA_ENABLE_CUDA=ON tree (its core/omp objects and config.h
# are reused); WARP: 32 (default) or 64; TEST: gpu_cross (default) or core suite names
# (reduce, binary, unary, random, transfer, creation, views, matmul, bad_input).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: run.sh CUDA_BUILD_DIR [WARP] [TEST...]}" && pwd)
warp=${2:-32}
shift $(($# < 2 ? $# : 2))
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(gpu_cross)
grep -q '#define TSR_HAVE_CUDA 1' "$build/include/tessera/config.h" ||
  { echo "$build is not a CUDA build" >&2; exit 2; }
work=$build/gpu_emu
mkdir -p "$work/src/gpu" "$work/inc"
: >"$work/inc/cuda_runtime.h"
for f in "$root"/src/gpu/*.cu "$root"/src/gpu/*.cuh; do
  python3 "$here/prep.py" "$f" "$work/src/gpu/$(basename "$f")" >/dev/null
done
cxx=(g++ -std=c++20 -O1 -g -fopenmp -w -include "$here/tsr_emu.h" -I"$work/inc"
     -I"$root/include" -I"$build/include" -I"$root/src" -DTSR_GPU_VENDOR_BLAS=0)
objs=()
for f in "$work"/src/gpu/*.cu; do
  o=$work/$(basename "$f" .cu).o
  "${cxx[@]}" -x c++ -c "$f" -o "$o"
  objs+=("$o")
done
g++ -std=c++20 -O2 -c "$here/tsr_emu.cpp" -o "$work/tsr_emu.o"
rm -f "$work/libemu.a"
ar rcs "$work/libemu.a" "$build"/CMakeFiles/tessera_objects.dir/src/core/*.o \
  "$build"/CMakeFiles/tessera_objects.dir/src/omp/*.o "${objs[@]}" "$work/tsr_emu.o"
mpi=()
if command -v mpicc >/dev/null 2>&1; then read -r -a mpi <<<"$(mpicc --showme:compile)"; fi
status=0
for t in "${tests[@]}"; do
  if [ "$t" = gpu_cross ]; then srcs=("$root/tests/test_gpu_cross.c"); else
    srcs=("$root/tests/test_$t.c" "$root/tests/core_util.c"); fi
  gcc -std=c11 -O1 -g -D_POSIX_C_SOURCE=200809L "${mpi[@]}" -I"$root/include" -I"$build/include" \
    -I"$root/tests/common" -I"$root/tests" "${srcs[@]}" "$root/tests/common/tsr_test.c" \
    -o "$work/$t" "$work/libemu.a" -fopenmp -lcmocka -lstdc++ -lm -lpthread
  echo "== $t (emulated, warp $warp)"
  TSR_EMU_WARP=$warp TSR_TEST_DEVICE=cuda "$work/$t" || status=1
done
exit $status
