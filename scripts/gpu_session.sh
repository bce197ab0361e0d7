#!/usr/bin/env bash
# The device work of issue 12, scripted so that a session with a GPU spends its minutes
# running, not writing. Two halves:
#
#   scripts/gpu_session.sh prepare
#       HERE (a machine with apt and network, no GPU needed): downloads the Debian packages
#       the build needs and the GPU machine lacks (cmocka, Open MPI and their libraries) into
#       .gpu_debs/ (git-ignored through .git/info/exclude). The device image has nvcc, CMake
#       and ninja but nothing can be installed there.
#
#   scripts/gpu_session.sh PHASE...        (on the GPU machine; carry .gpu_debs)
#       build     configure + build the CUDA variant (sm_90) in build/gpu-session
#       test      ctest, every label but gpu-emu (cuda, cpu, mpi, gpu_large), then
#                 gpu_cross and the cuda suite again with TSR_GPU_SYNC_DEBUG=1, and the examples
#       sanitize  compute-sanitizer memcheck, racecheck, synccheck, initcheck on gpu_cross and
#                 the cuda suite programs
#       bench     bench_gpu (native vs cuBLAS, bandwidth, overhead) 1024..8192, JSON kept
#       mpi       tessera-gemm --device cuda under mpirun -np 1, 2, 4 (staging path; the
#                 device-to-device path when the MPI is CUDA-aware), with verification
#       all       every phase above in order (does not fit one 10-minute call: use phases)
#   Each phase writes its log under $OUT (default ./gpu_session_out) and appends one line to
#   $OUT/summary.txt; the logs are also packed into $OUT/gpu_session_logs.tar.gz (the device
#   tool returns at most 8 files). A phase's failure is recorded and the next phase still runs.
#
# Suggested calls for a 30-minute device budget (each under the 10-minute limit):
#   run(command="scripts/gpu_session.sh build test", carry=[".gpu_debs"], timeout_s=600)
#   run(command="scripts/gpu_session.sh sanitize", carry=[".gpu_debs"], timeout_s=600)
#   run(command="scripts/gpu_session.sh bench mpi", carry=[".gpu_debs"], timeout_s=600)
# (the build directory survives between calls while the machine stays warm; a cold machine
# rebuilds it first, about 3-4 minutes on 16 cores).
# Nothing here marks a figure as measured: the outputs are raw material for the closing note.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/gpu_session_out}
mkdir -p "$OUT/logs"
build=$root/build/gpu-session
debs=$root/.gpu_debs
deproot=/tmp/tsr_gpu_deps
jobs=$(nproc 2>/dev/null || echo 4)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

note() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$OUT/summary.txt"; }

# Runs "$@" with its output in logs/<name>.log, bounded by <limit> seconds; notes the outcome.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@" >"$OUT/logs/$name.log" 2>&1
  rc=$?
  note "$name: rc=$rc ($((SECONDS - t0)) s)$([ $rc -eq 124 ] && echo ' TIMED OUT')"
  return $rc
}

pack() {
  tar -C "$OUT" -czf "$OUT/gpu_session_logs.tar.gz" logs 2>/dev/null || true
}

# ------------------------------------------------------------------------------ prepare ----
prepare() {
  mkdir -p "$debs" # git-ignored (.gitignore), so the device tool carries it only when named
  # cmocka for the tests; Open MPI and the libraries it loads (Debian 12 names).
  local pkgs=(libcmocka0 libcmocka-dev openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev
              libpmix2 libhwloc15 libhwloc-plugins libevent-core-2.1-7 libevent-pthreads-2.1-7
              libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 libibverbs1 librdmacm1 libnl-3-200
              libnl-route-3-200 libxnvctrl0 libmunge2 libltdl7 libnuma1 libopenblas0
              libopenblas0-pthread libgfortran5 libcurl4 libnghttp2-14 librtmp1 libssh2-1
              libpsl5 libldap-2.5-0 libsasl2-2 libbrotli1 libudev1 libgomp1 libquadmath0
              pkgconf pkgconf-bin libpkgconf3)
  local missing=()
  for p in "${pkgs[@]}"; do
    (cd "$debs" && apt-get download "$p" >/dev/null 2>&1) || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || echo "prepare: not downloadable here: ${missing[*]}" >&2
  du -sh "$debs"
  ls "$debs" | wc -l
}

# ------------------------------------------------------------------------------ device -----
# Unpacks the carried packages into $deproot (never into /) and points the tools at them.
use_deps() {
  [ -d "$debs" ] || { note "deps: no .gpu_debs carried: building with what the image has"; return 0; }
  if [ ! -d "$deproot/usr" ]; then
    mkdir -p "$deproot"
    for f in "$debs"/*.deb; do dpkg -x "$f" "$deproot"; done
  fi
  local multi=$deproot/usr/lib/x86_64-linux-gnu
  # Debian names Open MPI's tools mpicc.openmpi etc. and links mpicc to them at install time.
  mkdir -p "$deproot/bin"
  for f in "$deproot"/usr/bin/*.openmpi; do
    [ -e "$f" ] && ln -sf "$f" "$deproot/bin/$(basename "$f" .openmpi)"
  done
  export PATH=$deproot/bin:$deproot/usr/bin:$PATH
  export LD_LIBRARY_PATH=$multi:$multi/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Only the unpacked packages' .pc files, their /usr paths moved under $deproot.
  export PKG_CONFIG_LIBDIR=$multi/pkgconfig:$deproot/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$deproot
  export CMAKE_PREFIX_PATH=$deproot/usr
  export OPAL_PREFIX=$deproot/usr # relocated Open MPI finds its help and component files
  export OMPI_MCA_plm_rsh_agent=false
}

phase_build() {
  note "build: $(nvcc --version | tail -1)"
  nvidia-smi >"$OUT/logs/nvidia-smi.txt" 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
    >>"$OUT/summary.txt" 2>&1
  local mpi=ON
  command -v mpicc >/dev/null 2>&1 || mpi=OFF
  step configure 300 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSERA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DTESSERA_ENABLE_MPI=$mpi ||
    return 1
  step build 900 cmake --build "$build" -j "$jobs"
}

phase_test() {
  [ -d "$build" ] || phase_build || return 1
  # gpu-emu (the host emulator) is for machines without a GPU.
  (cd "$build" && step ctest_all 420 ctest -j 4 -LE gpu-emu --output-on-failure --timeout 300)
  (cd "$build" && step ctest_sync_debug 300 env TSR_GPU_SYNC_DEBUG=1 ctest -L cuda \
    --output-on-failure --timeout 200)
  for ex in "$build"/examples/*; do
    [ -x "$ex" ] && [ -f "$ex" ] || continue
    step "example_$(basename "$ex")" 120 env TSR_DEVICE=cuda "$ex"
  done
}

# The GPU test programs under each compute-sanitizer tool.
phase_sanitize() {
  [ -d "$build" ] || phase_build || return 1
  local progs=(gpu_cross core_matmul core_reduce core_binary core_unary core_random
               core_transfer kernel_helpers)
  for tool in memcheck racecheck synccheck initcheck; do
    for p in "${progs[@]}"; do
      local exe
      exe=$(find "$build" -maxdepth 2 -type f -name "$p" -perm -u+x | head -1)
      [ -n "$exe" ] || continue
      step "sanitize_${tool}_$p" 240 env TSR_TEST_DEVICE=cuda compute-sanitizer \
        --tool "$tool" --error-exitcode 99 "$exe"
    done
  done
}

phase_bench() {
  [ -d "$build" ] || phase_build || return 1
  (cd "$build" && step bench_gpu 540 bench/bench_gpu --sizes 1024,2048,4096,8192 --reps 7 \
    --json "$OUT/bench_gpu.json")
}

phase_mpi() {
  [ -d "$build" ] || phase_build || return 1
  local cli
  cli=$(find "$build" -maxdepth 3 -type f -name tessera-gemm -perm -u+x | head -1)
  # The MPI tests with GPU matrices (dist_gemm_cuda_*) ran in the test phase.
  [ -n "$cli" ] || { note "mpi: no tessera-gemm (built without MPI?)"; return 1; }
  step gemm_np1_16384 300 mpirun -np 1 "$cli" -m 16384 -n 16384 -k 16384 --dtype f32 \
    --device cuda --repeat 3 --json "$OUT/logs/gemm_np1.json"
  for np in 2 4; do
    step "gemm_np${np}_8192" 240 mpirun --oversubscribe -np "$np" "$cli" -m 8192 -n 8192 \
      -k 8192 --dtype f64 --device cuda --repeat 2 --verify \
      --json "$OUT/logs/gemm_np$np.json"
  done
  (cd "$build" && step ctest_mpi 300 ctest -L mpi --output-on-failure --timeout 200)
}

[ $# -gt 0 ] || { sed -n '2,33p' "$0"; exit 2; }
for phase in "$@"; do
  case $phase in
    prepare) prepare || exit 1; continue ;;
    all) set -- build test sanitize bench mpi ;;
  esac
done
use_deps
for phase in "$@"; do
  case $phase in
    prepare) ;;
    build) phase_build ;;
    test) phase_test ;;
    sanitize) phase_sanitize ;;
    bench) phase_bench ;;
    mpi) phase_mpi ;;
    *) echo "unknown phase '$phase' (prepare build test sanitize bench mpi all)" >&2; exit 2 ;;
  esac
  pack
done
note "done: $*"
