#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Per-call PDGEMM: bench/bench_pdgemm_calls.c (a plain ScaLAPACK program) run as is (the
# anchor: ScaLAPACK's PDGEMM over OpenBLAS) and with libtessera_scalapack preloaded, in
# alternating rounds, one thread per rank. With --paths, Tessera also runs with each path
# forced (TSR_SCALAPACK_PATH=direct, =redistribute), to check the per-call rule. Prints per
# (mode, grid, n, nb) the median microseconds per call of each (median over rounds of each
# round's median; the spread is the min-max of the rounds' medians), the ratio ScaLAPACK time /
# Tessera time (above 1: Tessera is faster), checks that every run computed the same C, and
# writes JSON. With --count, every run also preloads bench/mpi_count.c's PMPI shim and the
# table gives the MPI calls of one pdgemm_ call (point-to-point + collective, the most over
# the ranks): exact, whatever the machine's load.
#
# usage: bench/run_pdgemm_calls.sh [BUILD_DIR] [--grids "1x2 2x2"] [--sizes 8,32,...]
#          [--nbs 2,...] [--modes update,square,offset,dot,rank1] [--rounds K] [--seconds S] [--paths]
#          [--count] [--json F]
#   defaults: build/cpu, grids 1x2 and 2x2, sizes 8,32,64,128,256,512,1024, block sizes
#   2,4,16,64,256, all modes, 3 rounds, 0.3 s a point, ./bench_pdgemm_calls.json
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/cpu
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$1; shift; fi
grids="1x2 2x2" sizes=8,32,64,128,256,512,1024 nbs=2,4,16,64,256 modes=update,square,offset,dot,rank1
rounds=3 seconds=0.3 paths=0 count=0 json=bench_pdgemm_calls.json
while [ $# -gt 0 ]; do
  case "$1" in
    --grids) grids=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --nbs) nbs=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --paths) paths=1; shift ;;
    --count) count=1; shift ;;
    --json) json=$2; shift 2 ;;
    -h|--help) sed -n '3,20p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
cmake --build "$build" --target bench_pdgemm_calls tessera_scalapack tsr_mpi_count \
  -j "${TSR_JOBS:-2}" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
lib=$build/libtessera_scalapack.so
prog=$build/bench/bench_pdgemm_calls
shim=""
[ "$count" = 1 ] && shim=$build/bench/libtsr_mpi_count.so
pre() { # pre [LIB]: the LD_PRELOAD value of a run
  local v="$shim${1:+${shim:+:}$1}"
  echo "$v"
}
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
variants=("scalapack" "tessera")
[ "$paths" = 1 ] && variants+=("direct" "redistribute")
for round in $(seq "$rounds"); do
  for grid in $grids; do
    p=${grid%x*} q=${grid#*x}
    args=(--p "$p" --q "$q" --sizes "$sizes" --nbs "$nbs" --modes "$modes" --seconds "$seconds")
    for v in "${variants[@]}"; do
      case "$v" in
        scalapack) mpiexec -n $((p * q)) --oversubscribe -x LD_PRELOAD="$(pre)" "$prog" "${args[@]}" ;;
        tessera) mpiexec -n $((p * q)) --oversubscribe -x LD_PRELOAD="$(pre "$lib")" "$prog" "${args[@]}" ;;
        *) mpiexec -n $((p * q)) --oversubscribe -x LD_PRELOAD="$(pre "$lib")" -x TSR_SCALAPACK_PATH="$v" \
             "$prog" "${args[@]}" | sed "s/\"impl\":\"tessera\"/\"impl\":\"$v\"/" ;;
      esac >> "$lines"
    done
  done
  echo "round $round of $rounds done" >&2
done
python3 - "$lines" "$json" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
cpu = sys.argv[3]
impls = [i for i in ("scalapack", "tessera", "direct", "redistribute") if any(r["impl"] == i for r in runs)]
keys = sorted({(r["mode"], r["p"], r["q"], r["n"], r["nb"]) for r in runs})
print(f"\nPer-call PDGEMM, one thread per rank, CPU: {cpu}")
print("microseconds per call: median of the rounds' medians (min-max of the rounds); ratio = ScaLAPACK / Tessera")
counted = any(r.get("mpi_p2p_per_call", -1) >= 0 for r in runs)
head = f"{'mode':>7} {'grid':>5} {'n':>5} {'nb':>4}" + "".join(f" {i:>24}" for i in impls) + f" {'ratio':>6}"
if counted:
    head += "  MPI calls per call, p2p+coll: " + " / ".join(impls)
print(head)
out = {"benchmark": "bench_pdgemm_calls", "cpu": cpu, "results": []}
bad = 0
for k in keys:
    rows = [r for r in runs if (r["mode"], r["p"], r["q"], r["n"], r["nb"]) == k]
    res = {}
    for i in impls:
        v = [r["median_us"] for r in rows if r["impl"] == i]
        if v:
            res[i] = (statistics.median(v), min(v), max(v))
    sums = [r["checksum"] for r in rows]
    if max(sums) - min(sums) > 1e-8 * max(1.0, max(abs(s) for s in sums)):
        bad += 1
    ratio = res["scalapack"][0] / res["tessera"][0] if "scalapack" in res and "tessera" in res else float("nan")
    cells = "".join(f" {res[i][0]:10.1f} ({res[i][1]:.0f}-{res[i][2]:.0f})".rjust(25) if i in res else " " * 25 for i in impls)
    line = f"{k[0]:>7} {k[1]}x{k[2]:<3} {k[3]:5d} {k[4]:4d}{cells} {ratio:6.2f}"
    if counted:
        cnt = {}
        for i in impls:
            c = [r for r in rows if r["impl"] == i and r.get("mpi_p2p_per_call", -1) >= 0]
            if c:
                cnt[i] = (c[0]["mpi_p2p_per_call"], c[0]["mpi_collectives_per_call"])
        line += "  " + " / ".join(f"{cnt[i][0]:g}+{cnt[i][1]:g}" if i in cnt else "-" for i in impls)
    print(line)
    out["results"].append({"mode": k[0], "p": k[1], "q": k[2], "n": k[3], "nb": k[4],
                           "ratio": ratio, **{i: {"median_us": res[i][0], "min_us": res[i][1],
                                                  "max_us": res[i][2],
                                                  "mpi": [(r.get("mpi_p2p_per_call"), r.get("mpi_collectives_per_call")) for r in rows if r["impl"] == i][:1]}
                                              for i in res}})
ratios = [r["ratio"] for r in out["results"] if r["ratio"] == r["ratio"]]
if ratios:
    print(f"ratio over all points: median {statistics.median(ratios):.2f}, min {min(ratios):.2f}, max {max(ratios):.2f}")
json.dump(out, open(sys.argv[2], "w"), indent=1)
if bad:
    print(f"CHECKSUMS DIFFER in {bad} points")
    sys.exit(1)
PY
