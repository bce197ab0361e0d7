#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The BLAS drop-in benchmark: an unmodified C program calling dgemm_ at n = 1024 and 2048,
# run once against OpenBLAS and once with libtessera_blas preloaded, in one run of bench_blas
# (which starts both children itself); prints the table with the ratio and writes JSON.
#
# usage: bench/run_blas.sh [BUILD_DIR] [bench_blas options...]
#   BUILD_DIR  a configured build (default: build/cpu, as made by scripts/test.sh); built here
#   options    e.g. --threads 2 --reps 5 --json out.json (default JSON: ./bench_blas.json)
#
# What it measures is what a user gets from the two commands
#   ./app                                           # OpenBLAS
#   LD_PRELOAD=BUILD_DIR/libtessera_blas.so ./app   # Tessera for GEMM, OpenBLAS for the rest
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/cpu}
[ $# -gt 0 ] && shift
cmake --build "$build" --target bench_blas tessera_blas -j "${TSR_JOBS:-2}" >/dev/null
exec "$build/bench/bench_blas" --tessera-lib "$build/libtessera_blas.so" --sizes 1024,2048 "$@"
