#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The ScaLAPACK drop-in benchmark: the same PDGEMM program (bench/bench_pdgemm.c, linked
# against Debian's ScaLAPACK over OpenBLAS) run as is and with libtessera_scalapack
# preloaded, alternating the two, on 1x2 and 2x2 grids; one thread per rank. Prints the
# median GFLOP/s of each, the spread (min-max over all repetitions), the ratio
# Tessera / ScaLAPACK, and checks that both computed the same C (checksums); writes JSON.
#
# usage: bench/run_pdgemm.sh [BUILD_DIR] [--n N] [--nb NB] [--reps R] [--rounds K] [--json F]
#          [--grids "1x2 2x2"] [--complex]
#   defaults: build/cpu, n 4096, NB 256, 3 timed calls per run, 2 rounds, ./bench_pdgemm.json
#   --complex: PZGEMM (C = alpha A B^H, double complex; GFLOP/s counted as 8 n^3) instead
# What it measures is what a user gets from the two commands
#   mpiexec -n 4 ./app                                                 # ScaLAPACK
#   mpiexec -n 4 -x LD_PRELOAD=BUILD_DIR/libtessera_scalapack.so ./app  # Tessera's PDGEMM
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/cpu
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$1; shift; fi
n=4096 nb=256 reps=3 rounds=2 json=bench_pdgemm.json grids="1x2 2x2" cx=0
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n=$2; shift 2 ;;
    --nb) nb=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --complex) cx=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
cmake --build "$build" --target bench_pdgemm tessera_scalapack -j "${TSR_JOBS:-2}" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
lib=$build/libtessera_scalapack.so
prog=$build/bench/bench_pdgemm
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
for round in $(seq "$rounds"); do
  for grid in $grids; do
    set -- ${grid%x*} ${grid#*x}
    np=$(($1 * $2))
    args=(--n "$n" --nb "$nb" --p "$1" --q "$2" --reps "$reps" --complex "$cx")
    mpiexec -n "$np" --oversubscribe "$prog" "${args[@]}" | tee -a "$lines"
    mpiexec -n "$np" --oversubscribe -x LD_PRELOAD="$lib" "$prog" "${args[@]}" | tee -a "$lines"
  done
done
python3 - "$lines" "$json" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
cpu = sys.argv[3]
out = {"benchmark": "bench_pdgemm", "cpu": cpu, "results": []}
print(f"\n{runs[0].get('routine', 'pdgemm').upper()} n = {runs[0]['n']}, NB = {runs[0]['nb']}, one thread per rank, CPU: {cpu}")
print(f"{'grid':>5} {'ScaLAPACK GFLOP/s':>26} {'Tessera GFLOP/s':>26} {'ratio':>6}")
for grid in sorted({(r["p"], r["q"]) for r in runs}):
    res = {}
    for impl in ("scalapack", "tessera"):
        v = [g for r in runs if (r["p"], r["q"]) == grid and r["impl"] == impl for g in r["gflops"]]
        res[impl] = (statistics.median(v), min(v), max(v), v)
    sums = [r["checksum"] for r in runs if (r["p"], r["q"]) == grid]
    spread = max(sums) - min(sums)
    ok = spread <= 1e-9 * max(1.0, max(abs(s) for s in sums))
    ratio = res["tessera"][0] / res["scalapack"][0]
    fmt = lambda t: f"{t[0]:8.2f} ({t[1]:.2f}-{t[2]:.2f})"
    print(f"{grid[0]}x{grid[1]:<3} {fmt(res['scalapack']):>26} {fmt(res['tessera']):>26} "
          f"{ratio:6.2f}{'' if ok else '  CHECKSUMS DIFFER'}")
    out["results"].append({"grid": f"{grid[0]}x{grid[1]}", "n": runs[0]["n"],
                           "nb": runs[0]["nb"], "scalapack_gflops": res["scalapack"][0],
                           "tessera_gflops": res["tessera"][0], "ratio": ratio,
                           "same_result": ok, "scalapack_reps": res["scalapack"][3],
                           "tessera_reps": res["tessera"][3]})
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(f"JSON: {sys.argv[2]}")
PY
