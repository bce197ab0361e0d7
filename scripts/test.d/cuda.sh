# SPDX-License-Identifier: BSD-3-Clause
# Hook of scripts/test.sh (sourced in a subshell; uses $BUILD, tsr_build_variant, run_ctest):
# the CUDA variant, when nvcc exists (on PATH or in /usr/local/cuda/bin). Without a GPU the
# GPU tests report skipped (exit 77) and everything else must pass; gpu_no_device then checks
# the no-device path for real. A short bench_gpu run checks that the benchmark starts and
# exits cleanly (it skips without a GPU).
nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc=/usr/local/cuda/bin/nvcc
fi
if [ -z "$nvcc" ]; then
  echo "cuda: nvcc not found: skipped"
  return 0
fi
tsr_build_variant cuda "$BUILD/cuda" -DCMAKE_CUDA_COMPILER="$nvcc" || return 1
run_ctest "$BUILD/cuda" -E "$TSR_GPU_VARIANT_SKIP" || return 1 # CPU-job suites: see test.sh
(cd "$BUILD/cuda" && bench/bench_gpu --sizes 1024 --reps 3 --bw-log2 20 --no-skinny --json bench_gpu_smoke.json) || return 1
