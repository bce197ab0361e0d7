#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs GPU test programs against the GPU backend's own kernels executed on the host by a
# small CUDA emulator (tsr_emu.h/.cpp: the threads of a block are fibers run round-robin,
# released together at __syncthreads and per warp at shuffles; host memory is device memory;
# prep.py rewrites the <<<...>>> launches). It checks the kernels' indexing, tiling, vector
# paths, split-K and reductions, with a warp of 32 or a wavefront of 64, on a machine without
# a GPU. Its limits: threads run one at a time in a fixed order, so races inside a barrier
# interval are invisible; host loads never fault on misalignment; there is one memory space,
# no timing and no real scheduling. CTest runs it as gpu_emu_warp32/64 (label gpu-emu,
# TSR_EMU_QUICK=1); it is not a substitute for a GPU run. The cp.async path (sm_80+) is
# compiled out here: the emulator runs the plain-load pipeline that HIP uses.
#
#   tests/gpu_emu/run.sh CUDA_BUILD_DIR [WARP] [TEST...]
# CUDA_BUILD_DIR: a built -DTESSERA_ENABLE_CUDA=ON tree (its core/omp objects and config.h
# are reused); WARP: 32 (default) or 64; TEST: gpu_cross (default) or core suite names
# (reduce, binary, unary, random, transfer, creation, views, matmul, bad_input,
# kernel_helpers), gpu_fault (a sticky GPU error, injected), gpu_alloc (the allocator's
# caching and exact-size modes, TSR_GPU_ALLOC_CACHE=1 and 0), emu_complex (the complex
# kernels through the backend table: GEMM of every operation pair against a float64-complex
# reference, its launch/copy/wait counts; test_emu_complex.c), dist_gemm (SUMMA with
# emulated-GPU matrices under mpirun -np 2, both panel paths), dist_pipeline (SUMMA's counted
# copies, syncs, GEMM calls and pinned allocations under mpirun -np 4, both panel paths; the
# transposed operands' device exchange, none of it through the host on one rank), dist_25d
# (-np 4), dist_transpose (every transpose on the grids of 2 ranks, -np 2), dist_complex
# (complex SUMMA, 2.5D and the complex Freivalds' check on the device, -np 2), dist_bcast
# (the pipelined broadcast from emulated device buffers, -np 3) or job (tessera-gemm
# --device cuda at -np 1, 2, 4 against NumPy, job.sh).
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
work=$build/gpu_emu/warp$warp # one tree per warp size: CTest may run both at once
mkdir -p "$work/src/gpu" "$work/inc/tessera"
: >"$work/inc/cuda_runtime.h"
# The emulator has no cuBLAS: the tests see a build without the GPU vendor path.
sed 's/#define TSR_HAVE_GPU_VENDOR_BLAS 1/#define TSR_HAVE_GPU_VENDOR_BLAS 0/' \
  "$build/include/tessera/config.h" >"$work/inc/tessera/config.h"
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
shopt -s nullglob
# The library's C objects at any depth (src/omp/gemm/kernels/<isa>/ included).
mapfile -t cobjs < <(find "$build"/CMakeFiles/tessera_objects.dir/src/core \
  "$build"/CMakeFiles/tessera_objects.dir/src/mpi "$build"/CMakeFiles/tessera_objects.dir/src/omp \
  -name '*.o' 2>/dev/null | sort)
ar rcs "$work/libemu.a" "${cobjs[@]}" "${objs[@]}" "$work/tsr_emu.o"
mpi=()
if command -v mpicc >/dev/null 2>&1; then read -r -a mpi <<<"$(mpicc --showme:compile)"; fi
status=0
for t in "${tests[@]}"; do
  if [ "$t" = job ]; then
    # tessera-gemm itself on emulated GPUs (tests/gpu_emu/job.sh): its products at -np 1, 2, 4.
    read -r -a libs <<<"$(mpicc --showme:link)"
    gcc -std=c11 -O1 -g "${mpi[@]}" -I"$root/include" -I"$work/inc" -I"$build/include" \
      -I"$root/src" "$root"/src/cli/tessera_gemm.c "$root"/src/cli/gemm_options.c \
      "$root"/src/cli/gemm_guard.c "$root"/src/cli/gemm_report.c "$root"/src/cli/gemm_common.c -o "$work/tessera-gemm" \
      "$work/libemu.a" -fopenmp "${libs[@]}" -lstdc++ -lm -lpthread
    echo "== job (emulated, warp $warp)"
    TSR_EMU_WARP=$warp bash "$here/job.sh" "$work/tessera-gemm" "$work/job" || status=1
    continue
  fi
  case $t in
    gpu_cross) srcs=("$root/tests/test_gpu_cross.c") ;;
    kernel_helpers) srcs=("$root/tests/test_kernel_helpers.c") ;;
    gpu_fault) srcs=("$root/tests/test_gpu_fault.c") ;;
    gpu_alloc) srcs=("$root/tests/test_gpu_alloc.c") ;;
    emu_complex) srcs=("$here/test_emu_complex.c") ;;
    dist_gemm | dist_pipeline | dist_25d | dist_bcast | dist_transpose | dist_complex) srcs=("$root/tests/test_$t.c") ;;
    *) srcs=("$root/tests/test_$t.c" "$root/tests/core_util.c") ;;
  esac
  libs=()
  case $t in dist_*) read -r -a libs <<<"$(mpicc --showme:link)" ;; esac
  gcc -std=c11 -O1 -g -D_POSIX_C_SOURCE=200809L "${mpi[@]}" -I"$root/include" -I"$work/inc" \
    -I"$build/include" -I"$root/src" -I"$root/tests/common" -I"$root/tests" "${srcs[@]}" \
    "$root/tests/common/tsr_test.c" -o "$work/$t" "$work/libemu.a" -fopenmp -lcmocka \
    "${libs[@]}" -lstdc++ -lm -lpthread
  if [ "$t" = dist_bcast ]; then
    # The pipelined broadcast from emulated device buffers (pointers only reach MPI), 3 ranks.
    echo "== $t (emulated device buffers, mpirun -np 3)"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
      mpirun -np 3 --oversubscribe -x TSR_EMU_WARP=$warp -x TSR_TEST_DEVICE=cuda "$work/$t" ||
      status=1
    continue
  fi
  case $t in dist_*)
    np=2
    case $t in dist_pipeline | dist_25d) np=4 ;; esac
    for path in 1 0; do
      echo "== $t (emulated, warp $warp, mpirun -np $np, TSR_DIST_GPU_STAGING=$path)"
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
        mpirun -np $np --oversubscribe -x TSR_EMU_WARP=$warp -x TSR_TEST_DEVICE=cuda \
        -x TSR_DIST_GPU_STAGING=$path "$work/$t" || status=1
    done
    continue ;;
  esac
  if [ "$t" = gpu_alloc ]; then # the allocator in both modes (cache on, exact sizes)
    for cache in 1 0; do
      echo "== $t (emulated, warp $warp, TSR_GPU_ALLOC_CACHE=$cache)"
      TSR_GPU_ALLOC_CACHE=$cache TSR_EMU_WARP=$warp "$work/$t" || status=1
    done
    continue
  fi
  echo "== $t (emulated, warp $warp)"
  fault=()
  [ "$t" = gpu_fault ] && fault=(TSR_EMU_FAULT_AFTER=5)
  env "${fault[@]}" TSR_EMU_WARP=$warp TSR_TEST_DEVICE=cuda "$work/$t" || status=1
done
exit $status
