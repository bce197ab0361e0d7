#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs GPU test programs against the GPU backend's own kernels executed on the host by a
# small CUDA emulator (tsr_emu.h/.cpp: the threads of a block are fibers run round-robin,
# released together at __syncthreads and per warp at shuffles; host memory is device memory;
# the kernels launch through TSR__LAUNCH, which the emulator defines). The programs are build
# targets of a CUDA build (tests/gpu_emu/emu.cmake: the library tessera_emu and emu_<test>, in
# <build>/tests/gpu_emu/bin); this script runs them. It checks the kernels' indexing, tiling,
# vector paths, split-K and reductions, with a warp of 32 or a wavefront of 64 (TSR_EMU_WARP,
# read at run time), on a machine without a GPU. Its limits: threads run one at a time in a
# fixed order, so races inside a barrier interval are invisible; host loads never fault on
# misalignment; there is one memory space, no timing and no real scheduling. CTest runs it as
# gpu_emu_warp32/64 (label gpu-emu, TSR_EMU_QUICK=1); it is not a substitute for a GPU run. The
# cp.async path (sm_80+) is compiled out here: the emulator runs the plain-load pipeline that
# HIP uses.
#
#   tests/gpu_emu/run.sh CUDA_BUILD_DIR [WARP] [TEST...]
# CUDA_BUILD_DIR: a built -DTESSERA_ENABLE_CUDA=ON tree; WARP: 32 (default) or 64; TEST:
# gpu_cross (default) or core suite names
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
build=$(cd "${1:?usage: run.sh CUDA_BUILD_DIR [WARP] [TEST...]}" && pwd)
warp=${2:-32}
shift $(($# < 2 ? $# : 2))
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(gpu_cross)
grep -q '#define TSR_HAVE_CUDA 1' "$build/include/tessera/config.h" ||
  { echo "$build is not a CUDA build" >&2; exit 2; }
bin=$build/tests/gpu_emu/bin # tests/gpu_emu/emu.cmake
[ -d "$bin" ] || { echo "$bin: no emulated programs (build the CUDA tree first)" >&2; exit 2; }
work=$build/tests/gpu_emu/warp$warp # one folder per warp size: CTest may run both at once
mkdir -p "$work"
status=0
for t in "${tests[@]}"; do
  if [ "$t" = job ]; then
    # tessera-gemm itself on emulated GPUs (tests/gpu_emu/job.sh): its products at -np 1, 2, 4.
    echo "== job (emulated, warp $warp)"
    TSR_EMU_WARP=$warp bash "$here/job.sh" "$bin/tessera-gemm" "$work/job" || status=1
    continue
  fi
  [ -x "$bin/$t" ] || {
    echo "$bin/$t: not built (cmake --build $build --target emu_$t)" >&2
    status=1
    continue
  }
  if [ "$t" = dist_bcast ]; then
    # The pipelined broadcast from emulated device buffers (pointers only reach MPI), 3 ranks.
    echo "== $t (emulated device buffers, mpirun -np 3)"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
      mpirun -np 3 --oversubscribe -x TSR_EMU_WARP=$warp -x TSR_TEST_DEVICE=cuda "$bin/$t" ||
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
        -x TSR_DIST_GPU_STAGING=$path "$bin/$t" || status=1
    done
    continue ;;
  esac
  if [ "$t" = gpu_alloc ]; then # the allocator in both modes (cache on, exact sizes)
    for cache in 1 0; do
      echo "== $t (emulated, warp $warp, TSR_GPU_ALLOC_CACHE=$cache)"
      TSR_GPU_ALLOC_CACHE=$cache TSR_EMU_WARP=$warp "$bin/$t" || status=1
    done
    continue
  fi
  echo "== $t (emulated, warp $warp)"
  fault=()
  [ "$t" = gpu_fault ] && fault=(TSR_EMU_FAULT_AFTER=5)
  env "${fault[@]}" TSR_EMU_WARP=$warp TSR_TEST_DEVICE=cuda "$bin/$t" || status=1
done
exit $status
