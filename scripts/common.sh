# SPDX-License-Identifier: BSD-3-Clause
# Shared set-up for scripts/test.sh, scripts/demo.sh and scripts/bench.sh (sourced).
# Installs what is missing on Debian/Ubuntu (apt, with sudo when not root) and sets paths.
set -euo pipefail

TSR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TSR_JOBS=${TSR_JOBS:-$(nproc 2>/dev/null || echo 2)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# What a build and its tests need (the Docker images require every one: deps.sh --strict).
TSR_PACKAGES=(build-essential cmake pkg-config libcmocka-dev
  openmpi-bin libopenmpi-dev libopenblas-dev libscalapack-openmpi-dev libblas-test scalapack-mpi-test
  python3-numpy python3-jsonschema)
# What only scripts/test.sh's hooks use (the fuzzer's clang, plots, the API reference): CI
# installs them too, the images (strict mode) do not.
# lmod and python3-venv: the packaging hook (the module file, EasyBuild from PyPI).
TSR_CI_PACKAGES=(clang libclang-rt-dev gnuplot-nox doxygen lmod python3-venv)
# The distribution's MPI and what is linked against it: left out with TSR_WITHOUT_MPI=1
# (deps.sh --without-mpi), for an image that builds its own MPI (the CUDA-aware Open MPI of
# docker/cuda.Dockerfile).
TSR_MPI_PACKAGES=(openmpi-bin libopenmpi-dev libscalapack-openmpi-dev scalapack-mpi-test)
# TSR_STRICT_PACKAGES=1 (deps.sh --strict): a package that cannot be installed is an error
# (the images: a build must not go on without one). Unset or 0 (CI, scripts/test.sh): a
# warning, because package names differ across releases (libclang-rt-dev vs
# libclang-rt-14-dev) and the hooks skip what is missing.
TSR_STRICT_PACKAGES=${TSR_STRICT_PACKAGES:-0}
TSR_WITHOUT_MPI=${TSR_WITHOUT_MPI:-0}

# Each step with the wall clock and the seconds since the script started (CI's time budget).
tsr_log() { printf '\n==> [%s +%ds] %s\n' "$(date -u +%H:%M:%S)" "$SECONDS" "$*"; }

tsr_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

# tsr_install_packages [extra packages...]: installs the missing ones (TSR_PACKAGES, in CI
# mode TSR_CI_PACKAGES, and the extras; TSR_MPI_PACKAGES left out with TSR_WITHOUT_MPI=1). In
# strict mode returns 1, naming them, when some could not be installed.
tsr_install_packages() {
  local wanted=("${TSR_PACKAGES[@]}") missing=() failed=() p
  [ "$TSR_STRICT_PACKAGES" = 1 ] || wanted+=("${TSR_CI_PACKAGES[@]}")
  wanted+=("$@")
  for p in "${wanted[@]}"; do
    if [ "$TSR_WITHOUT_MPI" = 1 ] && [[ " ${TSR_MPI_PACKAGES[*]} " == *" $p "* ]]; then
      continue
    fi
    tsr_installed "$p" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing packages (${missing[*]}) and no apt-get: install them by hand" >&2
    return 1
  fi
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  tsr_log "installing ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # Package names differ across releases (libclang-rt-dev vs libclang-rt-14-dev): install
  # what exists, one by one when the batch fails.
  if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    for p in "${missing[@]}"; do
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" \
        || echo "$([ "$TSR_STRICT_PACKAGES" = 1 ] && echo error || echo warning): could not install $p" >&2
    done
  fi
  [ "$TSR_STRICT_PACKAGES" = 1 ] || return 0
  for p in "${missing[@]}"; do
    tsr_installed "$p" || failed+=("$p")
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "error: required packages not installed: ${failed[*]} (strict mode: the build stops)" >&2
    return 1
  fi
}

# tsr_configure_build DIR [cmake args...]: configure and build one variant.
tsr_configure_build() {
  local dir=$1
  shift
  cmake -S "$TSR_ROOT" -B "$dir" "$@"
  cmake --build "$dir" -j "$TSR_JOBS"
}

# tsr_variant_packages VARIANT: the extra Debian packages a variant needs.
tsr_variant_packages() {
  case "$1" in
    hip) echo "hipcc libamdhip64-dev rocm-device-libs" ;;
    *) echo "" ;;
  esac
}

# tsr_variant_args VARIANT: the CMake options of a build variant.
#   cpu   OpenMP + MPI + the vendor BLAS path (OpenBLAS)
#   asan  the same, Debug, with AddressSanitizer + UndefinedBehaviorSanitizer
#   cuda  + the CUDA backend (nvcc)
#   hip   + the HIP backend (the .cu files hipified at build time, hipcc)
tsr_variant_args() {
  case "$1" in
    cpu) echo "-DTESSERA_WITH_VENDOR_BLAS=ON" ;;
    asan) echo "-DCMAKE_BUILD_TYPE=Debug -DTESSERA_ENABLE_SANITIZERS=ON -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_EXAMPLES=OFF" ;;
    cuda)
      local nvcc
      nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
      echo "-DTESSERA_ENABLE_CUDA=ON -DTESSERA_WITH_VENDOR_BLAS=ON -DCMAKE_CUDA_COMPILER=$nvcc" ;;
    hip) echo "-DTESSERA_ENABLE_HIP=ON" ;;
    *) echo "unknown variant '$1' (cpu, asan, cuda, hip)" >&2; return 2 ;;
  esac
}

# tsr_build_variant VARIANT DIR [more cmake args...]: configure and build one variant.
tsr_build_variant() {
  local variant=$1 dir=$2 args
  shift 2
  args=$(tsr_variant_args "$variant") || return 2
  # shellcheck disable=SC2086
  tsr_configure_build "$dir" $args "$@"
}
