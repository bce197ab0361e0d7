# SPDX-License-Identifier: BSD-3-Clause
# Hook of scripts/test.sh (sourced in a subshell; uses $BUILD, tsr_build_variant, run_ctest):
# the HIP variant: src/gpu/*.cu hipified at build time and compiled with hipcc. Debian's
# hipcc/ROCm packages are installed when missing and available; without hipcc the variant is
# skipped. On a machine without an AMD GPU the HIP test programs run and report skipped,
# gpu_hipify_clean checks the translated sources, gpu_no_device checks the no-device path.
if ! command -v hipcc >/dev/null 2>&1; then
  # shellcheck disable=SC2046
  tsr_install_packages $(tsr_variant_packages hip) || true
fi
if ! command -v hipcc >/dev/null 2>&1; then
  echo "hip: hipcc not found: skipped"
  return 0
fi
tsr_build_variant hip "$BUILD/hip" || return 1
run_ctest "$BUILD/hip" -E "$TSR_GPU_VARIANT_SKIP" || return 1 # CPU-job suites: see test.sh
(cd "$BUILD/hip" && bench/bench_gpu --sizes 1024 --reps 3 --bw-log2 20 --no-skinny --json bench_gpu_smoke.json) || return 1
