#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the benchmarks, each against its anchor in the same run, and draws PNG plots.
#   scripts/bench.sh [--quick] [--tune] [--out DIR]
# Results (tables *.txt, JSON, PNG) go to bench/results/ (or DIR). --quick runs small sizes
# only (a smoke run: the figures mean little). --tune runs tessera-tune first (wisdom in
# DIR/wisdom), so bench_gemm shows the CPU GEMM with and without wisdom. With
# TSR_BENCH_OPENBLAS_CORETYPE=SkylakeX (say), bench_gemm runs a second time with both
# OpenBLAS anchors forced to those kernels (OPENBLAS_CORETYPE; on CPUs they do not recognize
# they fall back to Haswell ones). GPU benchmarks run when the CUDA build exists and a GPU is
# present (they say "skipped" otherwise). Real programs: bench_gemm on the shapes HPCC's DGEMM
# and HPL call, and Debian's HPC Challenge (hpcc, installed here) with and without the BLAS
# drop-in preloaded (bench/run_hpcc.sh; --quick: N 2000, one pair).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
quick=0 tune=0
out=$TSR_ROOT/bench/results
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --tune) tune=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# The CPU GEMM anchors besides Debian's OpenBLAS: BLIS (Debian) and the newest OpenBLAS, from
# the scipy-openblas32 wheel on PyPI (installed into a virtual environment under the build
# directory; bench_gemm dlopen()s it through TSR_BENCH_SCIPY_OPENBLAS and runs without it).
# hpcc: HPC Challenge 1.5.0 (HPL, DGEMM), the real program bench/run_hpcc.sh runs.
tsr_install_packages python3-matplotlib python3-venv libblis4-openmp hpcc
BUILD=${TSR_BUILD_DIR:-$TSR_ROOT/build}
venv=$BUILD/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || echo "warning: cannot create $venv (no scipy-openblas32 anchor)" >&2
fi
if [ -x "$venv/bin/python" ]; then
  "$venv/bin/python" -c "import scipy_openblas32" 2>/dev/null \
    || "$venv/bin/pip" install -q scipy-openblas32 \
    || echo "warning: pip install scipy-openblas32 failed (no scipy-openblas32 anchor)" >&2
  lib=$("$venv/bin/python" -c "import scipy_openblas32 as s; print(s.get_lib_dir())" 2>/dev/null || true)
  if [ -n "$lib" ] && [ -f "$lib/libscipy_openblas.so" ]; then
    export TSR_BENCH_SCIPY_OPENBLAS=$lib/libscipy_openblas.so
  fi
fi
tsr_build_variant cpu "$BUILD/cpu" >/dev/null
mkdir -p "$out"
B=$BUILD/cpu/bench

run() { # name command...: runs one benchmark, keeps its table
  local name=$1
  shift
  tsr_log "$name"
  "$@" | tee "$out/$name.txt"
}

if [ $quick -eq 1 ]; then
  run bench_ops "$B/bench_ops" --n 1048576 --reps 3 --json "$out/bench_ops.json"
  run bench_gemm "$B/bench_gemm" --sizes 128,256 --no-tall --threads 1 --reps 2 \
    --json "$out/bench_gemm.json"
  run bench_gemm_hpl "$B/bench_gemm" --sizes 0 --no-tall --dtypes d --threads 1 --reps 2 \
    --layout col --ld 2000 --alpha -1 --beta 1 --misalign 16 --cases 2000x1000x192 --check \
    --json "$out/bench_gemm_hpl.json"
else
  run bench_ops "$B/bench_ops" --json "$out/bench_ops.json"
  if [ $tune -eq 1 ]; then
    export TSR_WISDOM=$out/wisdom
    run tessera_tune "$BUILD/cpu/tessera-tune"
  fi
  run bench_gemm "$B/bench_gemm" --json "$out/bench_gemm.json"
  # Small matrices (the sup path: small, unpacked, in BLIS's term; the run keeps its name).
  run bench_gemm_small "$B/bench_gemm" --sizes 32,64,128,256 --no-tall \
    --json "$out/bench_gemm_small.json"
  # Small calls in every transpose (what NumPy's matmul of transposed views meets), 1 thread.
  run bench_gemm_trans "$B/bench_gemm" --sizes 16,32,64 --no-tall --threads 1 --best \
    --trans NN,NT,TN,TT --json "$out/bench_gemm_trans.json"
  # The accumulating calls of SUMMA and PDGEMM (C += A(:, panel) * B(panel, :)): beta = 1.
  run bench_gemm_beta1 "$B/bench_gemm" --beta 1 --sizes 2048 --json "$out/bench_gemm_beta1.json"
  # The shapes of real programs (issue 48), one thread a process, f64, column-major like the
  # Fortran BLAS callers: HPCC's DGEMM (one n = 4081 product, lda = n odd, random alpha and
  # beta, operands 16 bytes past a 64-byte boundary as glibc's malloc leaves them), alone
  # (SingleDGEMM) and on both cores at once (StarDGEMM); HPL's trailing updates
  # C -= L(m x NB) U(NB x n), beta 1, submatrices of an N = 10000 matrix (lda = ldc = N).
  hpcc_dgemm=(--sizes 0 --no-tall --dtypes d --threads 1 --reps 5 --layout col --alpha 0.53
    --beta 0.27 --misalign 16 --cases 4081x4081x4081)
  run bench_gemm_hpcc "$B/bench_gemm" "${hpcc_dgemm[@]}" --json "$out/bench_gemm_hpcc.json"
  run bench_gemm_stardgemm "$B/bench_gemm" "${hpcc_dgemm[@]}" --procs 2 --pin \
    --json "$out/bench_gemm_stardgemm.json"
  run bench_gemm_hpl "$B/bench_gemm" --sizes 0 --no-tall --dtypes d --threads 1 --reps 5 \
    --layout col --ld 10000 --alpha -1 --beta 1 --misalign 16 --check \
    --cases 10000x5000x192,10000x192x192,5000x2500x192,2000x1000x192,10000x5000x256,5000x2500x256 \
    --json "$out/bench_gemm_hpl.json"
  if [ -n "${TSR_BENCH_OPENBLAS_CORETYPE:-}" ]; then
    run bench_gemm_openblas_forced env OPENBLAS_CORETYPE="$TSR_BENCH_OPENBLAS_CORETYPE" \
      "$B/bench_gemm" --anchors openblas,scipy_openblas --json "$out/bench_gemm_openblas_forced.json"
  fi
fi
if [ -x "$TSR_ROOT/bench/run_dist_gemm.sh" ] && [ -x "$B/bench_dist_gemm" ]; then
  if [ $quick -eq 1 ]; then
    run bench_dist_gemm "$TSR_ROOT/bench/run_dist_gemm.sh" "$BUILD/cpu" --sizes 512 --nb 128 \
      --reps 1 --json "$out/bench_dist_gemm.json"
  else
    run bench_dist_gemm "$TSR_ROOT/bench/run_dist_gemm.sh" "$BUILD/cpu" \
      --json "$out/bench_dist_gemm.json"
  fi
fi
if [ -x "$TSR_ROOT/bench/run_blas.sh" ] && [ -x "$B/bench_blas" ]; then
  if [ $quick -eq 1 ]; then
    run bench_blas "$TSR_ROOT/bench/run_blas.sh" "$BUILD/cpu" --sizes 256 --reps 1 \
      --json "$out/bench_blas.json"
  else
    run bench_blas "$TSR_ROOT/bench/run_blas.sh" "$BUILD/cpu" --json "$out/bench_blas.json"
  fi
fi
if [ -x "$TSR_ROOT/bench/run_pdgemm.sh" ] && [ -x "$B/bench_pdgemm" ]; then
  if [ $quick -eq 1 ]; then
    run bench_pdgemm "$TSR_ROOT/bench/run_pdgemm.sh" "$BUILD/cpu" --n 1024 --reps 1 --rounds 1 \
      --json "$out/bench_pdgemm.json"
  else
    run bench_pdgemm "$TSR_ROOT/bench/run_pdgemm.sh" "$BUILD/cpu" --json "$out/bench_pdgemm.json"
  fi
fi
# HPC Challenge with and without the BLAS drop-in (bench/hpccinf.txt: HPL N 10000, NB 192,
# 1 x 2 ranks of one thread each; run_hpcc.sh alternates the two and checks the residuals).
if [ -x "$TSR_ROOT/bench/run_hpcc.sh" ]; then
  if [ $quick -eq 1 ]; then
    run hpcc "$TSR_ROOT/bench/run_hpcc.sh" "$BUILD/cpu" --quick --json "$out/run_hpcc.json"
  else
    run hpcc "$TSR_ROOT/bench/run_hpcc.sh" "$BUILD/cpu" --json "$out/run_hpcc.json"
  fi
fi
if [ -x "$BUILD/cuda/bench/bench_gpu" ]; then
  run bench_gpu "$BUILD/cuda/bench/bench_gpu" --json "$out/bench_gpu.json"
fi

tsr_log "plots"
/usr/bin/python3 "$TSR_ROOT/bench/plot.py" "$out"
ls "$out"/*.png
