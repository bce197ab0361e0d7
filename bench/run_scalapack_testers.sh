#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ScaLAPACK's own testers (Debian's scalapack-mpi-test) timed without and with
# libtessera_scalapack preloaded, alternating, one thread per rank: the routines that call
# pdgemm_ on submatrices (Hessenberg xdhrd, bidiagonal xdbrd, tridiagonal xdtrd reductions, LU
# xdlu, inversion xdinv) on their default inputs and, with --large, on inputs of our own
# (bench/scalapack_testers/: N 256-400, NB 16/32). Prints per tester and rank count the median wall seconds of each
# (min-max over the rounds), the ratio Tessera / ScaLAPACK (below 1: Tessera is faster), the
# pdgemm_ calls Tessera computed, and checks that both runs printed the same summary.
#
# usage: bench/run_scalapack_testers.sh [BUILD_DIR] [--np "2 4"] [--rounds K] [--large]
#          [--testers "xdhrd xdbrd xdtrd xdlu xdinv"] [--json F]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/cpu
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$1; shift; fi
nps="2 4" rounds=3 large=0 testers="xdhrd xdbrd xdtrd xdlu xdinv" json=bench_scalapack_testers.json
while [ $# -gt 0 ]; do
  case "$1" in
    --np) nps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --large) large=1; shift ;;
    --testers) testers=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    -h|--help) sed -n '3,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# Absolute: the testers run in a scratch folder, where a relative LD_PRELOAD finds nothing.
build=$(cd "$build" && pwd) || { echo "run_scalapack_testers.sh: no build folder $build" >&2; exit 2; }
dir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/scalapack/openmpi-tests
[ -d "$dir" ] || { echo "scalapack-mpi-test is not installed ($dir)" >&2; exit 77; }
cmake --build "$build" --target tessera_scalapack -j "${TSR_JOBS:-2}" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
lib=$build/libtessera_scalapack.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lines=$work/lines

# The tester's input: Debian's, or with --large ours (bench/scalapack_testers/, same format,
# N 256-400, NB 16/32, grids 1x2, 2x1, 2x2) where we have one.
input() { # input TESTER: the .dat the tester reads, into $work
  local dat
  dat=$(echo "${1#xd}" | tr a-z A-Z).dat
  if [ "$large" = 1 ] && [ -f "$root/bench/scalapack_testers/$dat" ]; then
    cp "$root/bench/scalapack_testers/$dat" "$work/$dat"
  else
    cp "$dir/$dat" "$work/$dat"
  fi
}

for round in $(seq "$rounds"); do
  for np in $nps; do
    for t in $testers; do
      [ -x "$dir/$t" ] || { echo "skip $t: not installed" >&2; continue; }
      input "$t"
      for impl in scalapack tessera; do
        rep=$work/report.json
        rm -f "$rep"
        pre=()
        [ "$impl" = tessera ] && pre=(-x LD_PRELOAD="$lib" -x TSR_SCALAPACK_REPORT="$rep")
        s=$(date +%s.%N)
        (cd "$work" && TSR_SCALAPACK_REPORT="$rep" mpiexec -n "$np" --oversubscribe "${pre[@]}" \
          "$dir/$t" > "$work/out_$impl.txt" 2>&1) || echo "warning: $t exited non-zero" >&2
        e=$(date +%s.%N)
        calls=0
        [ -f "$rep" ] && calls=$(sed -n 's/.*"calls":\([0-9]*\).*/\1/p' "$rep" | awk '{s+=$1} END {print s+0}')
        summary=$(grep -A3 "^Finished" "$work/out_$impl.txt" | tr -s ' ' | tr '\n' '|')
        printf '{"tester":"%s","np":%d,"impl":"%s","seconds":%s,"calls":%d,"summary":"%s"}\n' \
          "$t" "$np" "$impl" "$(awk -v a="$s" -v b="$e" 'BEGIN {printf "%.3f", b - a}')" "$calls" "${summary//\"/}" >> "$lines"
      done
    done
  done
  echo "round $round of $rounds done" >&2
done
python3 - "$lines" "$json" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
cpu = sys.argv[3]
print(f"\nScaLAPACK testers, wall seconds, one thread per rank, CPU: {cpu}")
print(f"{'tester':>7} {'np':>3} {'ScaLAPACK':>22} {'with Tessera':>22} {'ratio':>6} {'pdgemm_ calls':>14} summaries")
out = {"benchmark": "scalapack_testers", "cpu": cpu, "results": []}
bad = 0
for key in sorted({(r["tester"], r["np"]) for r in runs}):
    rows = [r for r in runs if (r["tester"], r["np"]) == key]
    v = {i: [r["seconds"] for r in rows if r["impl"] == i] for i in ("scalapack", "tessera")}
    med = {i: statistics.median(x) for i, x in v.items()}
    same = len({r["summary"] for r in rows}) == 1
    bad += not same
    calls = max(r["calls"] for r in rows)
    # Every one of these testers calls pdgemm_: none counted means the preload did not load.
    unloaded = calls == 0
    bad += unloaded
    ratio = med["tessera"] / med["scalapack"]
    cell = lambda i: f"{med[i]:7.2f} ({min(v[i]):.2f}-{max(v[i]):.2f})"
    print(f"{key[0]:>7} {key[1]:3d} {cell('scalapack'):>22} {cell('tessera'):>22} {ratio:6.2f} {calls:14d} {'same' if same else 'DIFFER'}"
          + (" NO CALL REACHED TESSERA (the preload did not load)" if unloaded else ""))
    out["results"].append({"tester": key[0], "np": key[1], "ratio": ratio, "calls": calls,
                           "seconds": v, "same_summary": same})
json.dump(out, open(sys.argv[2], "w"), indent=1)
sys.exit(1 if bad else 0)
PY
