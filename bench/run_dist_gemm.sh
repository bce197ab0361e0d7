#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Distributed GEMM benchmark: Tessera SUMMA vs ScaLAPACK PDGEMM, f64, n = 2048 and 4096, with
# P = 2 and P = 4 ranks (one mpiexec per P; one thread per rank), then one table of all rows
# and one JSON file.
#
# usage: bench/run_dist_gemm.sh [BUILD_DIR] [bench_dist_gemm options...]
#   BUILD_DIR  a configured build (default: build/cpu, as made by scripts/test.sh); built here
#   options    e.g. --sizes 2048 --nb 128 --reps 5 --json out.json
#              (default JSON: ./bench_dist_gemm.json; NB 256 for both libraries)
#   TSR_BENCH_PROCS  the rank counts (default "2 4")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/cpu}
[ $# -gt 0 ] && shift
cmake --build "$build" --target bench_dist_gemm -j "${TSR_JOBS:-2}" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
json=bench_dist_gemm.json
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for p in ${TSR_BENCH_PROCS:-2 4}; do
  echo "== P = $p" >&2
  # No binding: with more ranks than cores the ranks must be free to move.
  mpiexec -n "$p" --oversubscribe --bind-to none "$build/bench/bench_dist_gemm" \
    "${args[@]}" --rows "$rows" --json /dev/null > /dev/null
done
"$build/bench/bench_dist_gemm" --table "$rows" --json "$json"
