#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds every variant this machine can build and runs the tests; exits non-zero on any
# failure. Variants: CPU+MPI (always), ASan+UBSan (always), CUDA (when nvcc exists),
# HIP (when hipcc exists), and a bounded libFuzzer run of the .npy parser (when clang exists).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# The same two scripts the Docker images run (so their paths are tested here too).
"$TSR_ROOT/scripts/deps.sh" cpu

BUILD=${TSR_BUILD_DIR:-$TSR_ROOT/build}
failed=()

run_ctest() { # dir [ctest args...]
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure --timeout 600 -j "$TSR_JOBS" "$@")
}
# What the GPU variants (scripts/test.d/cuda.sh, hip.sh) leave out: suites that drive only
# CPU code, the same in every build, and run in the cpu and asan variants: the tessera-gemm
# job's result and fault suites (together ~3 minutes a variant), the CPU GEMM's kernel suites
# (gemm_*: they link the static library's CPU GEMM directly) and the reference BLAS testers
# under the CPU drop-in (blas_tester_*). The job's devices group (dist_cli_devices: --device
# cpu/cuda/auto and usage, what a GPU build changes), the BLAS drop-in's own tests (its GPU
# routing) and everything else run everywhere.
TSR_GPU_VARIANT_SKIP='^(dist_cli(_faults)?|gemm_(frame|kernels|config|complex)_.*|gemm_table|blas_tester_.*)$'

tsr_log "variant cpu: OpenMP + MPI + vendor BLAS path"
if "$TSR_ROOT/scripts/build.sh" cpu "$BUILD/cpu" --no-deps; then
  run_ctest "$BUILD/cpu" || failed+=(cpu)
else
  failed+=(cpu-build)
fi

tsr_log "variant asan: AddressSanitizer + UndefinedBehaviorSanitizer"
if tsr_build_variant asan "$BUILD/asan"; then
  ASAN_OPTIONS=detect_leaks=1 run_ctest "$BUILD/asan" -LE 'slow' || failed+=(asan)
else
  failed+=(asan-build)
fi

for hook in "$TSR_ROOT"/scripts/test.d/*.sh; do
  [ -e "$hook" ] || continue
  tsr_log "$(basename "$hook")"
  # shellcheck source=/dev/null
  (source "$hook") || failed+=("$(basename "$hook" .sh)")
done

if [ ${#failed[@]} -gt 0 ]; then
  tsr_log "FAILED variants: ${failed[*]}"
  exit 1
fi
tsr_log "all variants passed"
