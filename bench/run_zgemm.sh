#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Complex GEMM (issue 50) through the CBLAS drop-in against the anchors, in one interleaved run:
# bench_gemm --dtypes c,z (Tessera's native entry by the 1m method, libtessera_blas's
# cblas_cgemm/cblas_zgemm, Debian OpenBLAS, BLIS, and the newest OpenBLAS of the scipy-openblas32
# wheel, scipy_cblas_zgemm) at 16^3, 32^3, 64^3, 128^3, 512^3, 2048^3 and 4096x4096x256 on 1 and
# 2 threads, GFLOP/s counted as 8 m n k, every implementation's C compared first (--check).
#   run_zgemm.sh BENCH_DIR [OUT_DIR] [extra bench_gemm options]
# BENCH_DIR holds bench_gemm (a build's bench/); TSR_BENCH_SCIPY_OPENBLAS names
# libscipy_openblas.so (scripts/bench.sh installs the wheel into <build>/bench-venv; found there
# when unset). The table goes to stdout and OUT_DIR/bench_zgemm.txt, the figures to
# OUT_DIR/bench_zgemm.json; `uptime` before and after (the machine is shared: read the ratios).
set -eu
bench=${1:?usage: run_zgemm.sh BENCH_DIR [OUT_DIR] [options]}
out=${2:-.}
[ $# -ge 2 ] && shift 2 || shift 1
if [ -z "${TSR_BENCH_SCIPY_OPENBLAS:-}" ]; then
  for f in "$bench"/../bench-venv/lib/python3*/site-packages/scipy_openblas32/lib/libscipy_openblas.so \
    "$bench"/../../bench-venv/lib/python3*/site-packages/scipy_openblas32/lib/libscipy_openblas.so; do
    if [ -f "$f" ]; then
      TSR_BENCH_SCIPY_OPENBLAS=$f
      export TSR_BENCH_SCIPY_OPENBLAS
      break
    fi
  done
fi
mkdir -p "$out"
uptime
"$bench/bench_gemm" --dtypes c,z --sizes 16,32,64,128,512,2048 --no-tall --cases 4096x4096x256 \
  --threads 1,2 --check --json "$out/bench_zgemm.json" "$@" | tee "$out/bench_zgemm.txt"
uptime
