#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# HPC Challenge (Debian's `hpcc` 1.5.0, linked to libblas.so.3 = OpenBLAS through the
# alternatives; its HPL and DGEMM call cblas_dgemm) run as a user runs it, with and without
# Tessera's BLAS drop-in preloaded, the two alternated, on 1 x 2 ranks of one thread each
# (bench/hpccinf.txt: HPL N 10000, NB 192). Prints one row per run and the medians with the
# ratio Tessera / reference for HPL, StarDGEMM (every rank at once) and SingleDGEMM (one rank
# while the other waits); fails when a residual check fails or the drop-in was not used.
#
# usage: bench/run_hpcc.sh [BUILD_DIR] [--quick] [--pairs K] [--n N] [--nb NB] [--json FILE]
#   BUILD_DIR  a configured build (default: build/cpu); libtessera_blas is built here
#   --quick    N 2000, one pair (a smoke run: the figures mean little)
#   --pairs    runs of each library (default 3), alternated: ref, tessera, tessera, ref, ...
#   --n, --nb  HPL's N and NB (default: bench/hpccinf.txt's 10000 and 192); HPCC sizes its
#              DGEMM from N (N 10000 on 2 ranks: DGEMM_N 4081)
#   --json     output file (default ./run_hpcc.json)
# Needs hpcc and mpirun (scripts/bench.sh installs hpcc); prints "skipped" without them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/cpu
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  build=$1
  shift
fi
pairs=3 n="" nb="" json=run_hpcc.json
while [ $# -gt 0 ]; do
  case $1 in
    --quick) pairs=1 n=2000; shift ;;
    --pairs) pairs=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --nb) nb=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    *) echo "run_hpcc.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! command -v hpcc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "run_hpcc: skipped (no hpcc or mpirun; scripts/bench.sh installs the hpcc package)"
  exit 0
fi
# An absolute path: hpcc runs in a work folder, where a relative LD_PRELOAD finds nothing.
build=$(cd "$build" && pwd) || { echo "run_hpcc.sh: no build folder $build" >&2; exit 2; }
cmake --build "$build" --target tessera_blas -j "${TSR_JOBS:-2}" >/dev/null
lib=$build/libtessera_blas.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The input: bench/hpccinf.txt with N (line 6) and NB (line 8) replaced when asked.
awk -v n="$n" -v nb="$nb" 'NR == 6 && n != "" { $1 = n } NR == 8 && nb != "" { $1 = nb } 1' \
  "$root/bench/hpccinf.txt" > "$work/hpccinf.txt"

# One hpcc run (lib: ref or tessera) in its own directory; prints its row:
#   lib hpl_gflops stardgemm singledgemm dgemm_n hpl_n hpl_nb ok
run_one() {
  local which=$1 dir=$work/run$2 pre=()
  mkdir -p "$dir"
  cp "$work/hpccinf.txt" "$dir/"
  [ "$which" = tessera ] && pre=(-x LD_PRELOAD="$lib" -x TSR_BLAS_VERBOSE=1)
  (cd "$dir" && mpirun -np 2 --bind-to core -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
    "${pre[@]}" hpcc > out.txt 2> err.txt) || { cat "$dir/err.txt" >&2; return 1; }
  local f=$dir/hpccoutf.txt ok=1
  # Residual checks: HPL's (PASSED, no failed test), every DGEMM node without error, Success=1.
  grep -q "1 tests completed and passed residual checks" "$f" || ok=0
  grep -Eq "^ +[1-9][0-9]* tests completed and failed residual checks" "$f" && ok=0
  awk '/^Begin of (Star|Single)DGEMM section/ { s = 1 } /^End of/ { s = 0 }
       s && /Node\(s\) with error/ && $4 != 0 { bad = 1 } END { exit bad }' "$f" || ok=0
  grep -q "^Success=1" "$f" || ok=0
  # The drop-in must have taken the calls: one counts line per rank, cblas_dgemm > 0.
  if [ "$which" = tessera ] &&
    [ "$(grep -Ec 'cblas_dgemm [1-9]' "$dir/err.txt" || true)" -lt 2 ]; then
    echo "run_hpcc: the drop-in took no cblas_dgemm calls:" >&2
    cat "$dir/err.txt" >&2
    ok=0
  fi
  awk -F= -v lib="$which" -v ok=$ok '
    { v[$1] = $2 }
    END { printf "%s %.2f %.2f %.2f %s %s %s %d\n", lib, v["HPL_Tflops"] * 1000,
          v["StarDGEMM_Gflops"], v["SingleDGEMM_Gflops"], v["DGEMM_N"], v["HPL_N"],
          v["HPL_NB"], ok }' "$f"
}

echo "hpcc: $(command -v hpcc), its BLAS: $(readlink -f "$(ldconfig -p | awk '/libblas.so.3 .*x86-64/ { print $NF; exit }')")"
echo "drop-in: $lib; CPU: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
rows=$work/rows
: > "$rows"
i=0
for ((p = 0; p < pairs; ++p)); do
  order="ref tessera"
  [ $((p % 2)) -eq 1 ] && order="tessera ref"
  for which in $order; do
    i=$((i + 1))
    run_one "$which" "$i" >> "$rows"
    tail -n 1 "$rows" >&2
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v json="$json" '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { lib = $1; k = ++cnt[lib]; hpl[lib, k] = $2; star[lib, k] = $3; single[lib, k] = $4
    dn = $5; hn = $6; hnb = $7; if ($8 != 1) fail = 1
    printf "%-8s run %d: HPL %7.2f GFLOP/s  StarDGEMM %6.2f  SingleDGEMM %6.2f  residuals %s\n",
      lib, k, $2, $3, $4, $8 == 1 ? "passed" : "FAILED" }
  END {
    printf "\nHPL N %s NB %s, 1 x 2 ranks, 1 thread each; DGEMM_N %s; medians (min..max) of %d runs each\n",
      hn, hnb, dn, cnt["ref"]
    printf "%-12s %22s %22s %8s\n", "metric", "reference (OpenBLAS)", "tessera drop-in", "ratio"
    split("HPL_GFLOPs StarDGEMM_Gflops SingleDGEMM_Gflops", names, " ")
    out = "{\n  \"benchmark\": \"hpcc\",\n  \"unit\": \"GFLOP/s\",\n  \"statistic\": \"median\",\n  \"hpl_n\": " hn ", \"hpl_nb\": " hnb ", \"dgemm_n\": " dn ",\n  \"runs_each\": " cnt["ref"] ",\n  \"results\": ["
    for (m = 1; m <= 3; ++m) {
      for (l = 1; l <= 2; ++l) {
        L = l == 1 ? "ref" : "tessera"; lo[L] = 1e30; hi[L] = 0
        for (k = 1; k <= cnt[L]; ++k) {
          x = m == 1 ? hpl[L, k] : m == 2 ? star[L, k] : single[L, k]; a[k] = x
          if (x < lo[L]) lo[L] = x; if (x > hi[L]) hi[L] = x
        }
        md[L] = med(a, cnt[L])
      }
      printf "%-18s %7.2f (%.2f..%.2f) %7.2f (%.2f..%.2f) %8.3f\n", names[m], md["ref"], lo["ref"],
        hi["ref"], md["tessera"], lo["tessera"], hi["tessera"], md["tessera"] / md["ref"]
      out = out sprintf("%s\n    {\"name\": \"%s\", \"openblas\": %.2f, \"tessera_blas\": %.2f, \"ratio\": %.3f, \"spread\": {\"openblas\": [%.2f, %.2f], \"tessera_blas\": [%.2f, %.2f]}}",
        m > 1 ? "," : "", names[m], md["ref"], md["tessera"], md["tessera"] / md["ref"], lo["ref"], hi["ref"], lo["tessera"], hi["tessera"])
    }
    print out "\n  ],\n  \"residuals_passed\": " (fail ? "false" : "true") "\n}" > json
    if (fail) { print "run_hpcc: a residual check failed (or the drop-in took no calls)"; exit 1 }
    printf "residual checks passed in every run; wrote %s\n", json
  }' "$rows"
