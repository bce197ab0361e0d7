#!/usr/bin/env bash
# Runs the benchmarks, each against its anchor in the same run, and draws PNG plots.
#   scripts/bench.sh [--quick] [--out DIR]
# Results (tables *.txt, JSON, PNG) go to bench/results/ (or DIR). --quick runs small sizes
# only (a smoke run: the figures mean little). GPU benchmarks run when the CUDA build exists
# and a GPU is present (they say "skipped" otherwise).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
quick=0
out=$TSR_ROOT/bench/results
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
tsr_install_packages python3-matplotlib
BUILD=${TSR_BUILD_DIR:-$TSR_ROOT/build}
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
else
  run bench_ops "$B/bench_ops" --json "$out/bench_ops.json"
  run bench_gemm "$B/bench_gemm" --json "$out/bench_gemm.json"
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
if [ -x "$BUILD/cuda/bench/bench_gpu" ]; then
  run bench_gpu "$BUILD/cuda/bench/bench_gpu" --json "$out/bench_gpu.json"
fi

tsr_log "plots"
/usr/bin/python3 "$TSR_ROOT/bench/plot.py" "$out"
ls "$out"/*.png
