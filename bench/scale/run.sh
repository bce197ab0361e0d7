#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The SimGrid/SMPI scaling study of tsr_dist_gemm (SUMMA and 2.5D), in one command:
#
#   bench/scale/run.sh [--smoke] [--out DIR] [--rate FLOPS] [--no-calibrate] [--parts LIST]
#
# --parts: a comma-separated subset of cpu,bcast,gpu (default all): cpu = steps 2-3 below (CPU
# node rate); bcast = the pipelined broadcast (src/mpi/bcast.c) timed against MPI_Ibcast with
# real mpirun on 2 and 4 ranks here (bench/bench_bcast.c; skipped with --no-calibrate; sizes
# TSR_SCALE_BCAST_SIZES, default 64 KiB ... 64 MiB; rounds TSR_SCALE_BCAST_ROUNDS, 9) and
# simulated on the fat tree for P = 4 ... 256 (its 8 MiB row at P = 256 is the issue's micro
# target); gpu = the GPU-node study (H100 model of src/mpi/smpi_model.c, TSR_SMPI_GPU=1):
# weak scaling at n_local = 16384 of the library's SUMMA (look-ahead 2) on MPI_Ibcast and on
# the pipelined broadcast (AUTO), on two fabric models, with one rank's time line (see the GPU
# section below for its knobs). Sections of docs/scaling.md whose part did not run are kept
# as they were.
#
# 1. builds bench/scale twice: with smpicc in modeled-compute mode (build/scale-smpi) and with
#    mpicc computing for real (build/scale-real);
# 2. calibrates on this machine (unless --no-calibrate): the local GEMM rate of one rank alone
#    and of P = 2 and 4 ranks at once, MPI ping-pong latency and bandwidth; then predicts the
#    real P = 2 and 4 SUMMA times by simulating them on a platform made of those numbers, and
#    compares with the measured medians (alternating runs; the machine is shared);
# 3. simulates strong scaling (n = 65536) and weak scaling (2048 x 2048 per rank) for
#    P = 4 ... 1024 on a non-blocking fat tree (200 Gb/s links, 1 us), SUMMA against 2.5D,
#    a GPU-node rate, tall-and-skinny shapes and a dragonfly at P = 256 (about 40 minutes
#    on 2 busy cores; TSR_SCALE_STUDY=0 stops after the calibration);
# 4. writes DIR/results.json, PNG plots and docs/scaling.md (bench/scale/report.py).
#
# --smoke: P <= 16, small n, no calibration, a few seconds (CI runs it: ctest -L scale).
# --rate: the node rate of the CPU study (default: the measured single-rank rate, or 20 Gf).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$ROOT/scripts/common.sh"
smoke=0 out="" rate="" calibrate=1 parts=cpu,bcast,gpu
while [ $# -gt 0 ]; do
  case "$1" in
    --parts) parts=$2; shift 2 ;;
    --smoke) smoke=1; calibrate=0; shift ;;
    --out) out=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --no-calibrate) calibrate=0; shift ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ $smoke -eq 1 ]; then
  out=${out:-$ROOT/build/scale-smoke}
else
  out=${out:-$ROOT/build/scale-results}
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# SimGrid (smpicc, smpirun); matplotlib for the plots of the full study, from Debian's
# python3-matplotlib (so the system interpreter, as bench/plot.py).
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if [ $smoke -eq 1 ]; then
  command -v smpicc >/dev/null 2>&1 || tsr_install_packages libsimgrid-dev
elif ! command -v smpicc >/dev/null 2>&1 || ! "$PY" -c 'import matplotlib' 2>/dev/null; then
  tsr_install_packages libsimgrid-dev python3-matplotlib
fi

# ---------------------------------------------------------------- builds ---------------
SMPI_BUILD=${TSR_SCALE_SMPI_BUILD:-$ROOT/build/scale-smpi}
REAL_BUILD=${TSR_SCALE_REAL_BUILD:-$ROOT/build/scale-real}
tsr_log "building the modeled driver ($SMPI_BUILD)"
CC=smpicc CXX=smpicxx cmake -S "$HERE" -B "$SMPI_BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DTSR_SCALE_MODEL=ON >"$out/cmake-smpi.log" 2>&1 || { cat "$out/cmake-smpi.log"; exit 1; }
cmake --build "$SMPI_BUILD" --target tsr_scale_driver tsr_bench_bcast -j "${TSR_JOBS:-2}" >"$out/build-smpi.log" 2>&1 ||
  { tail -40 "$out/build-smpi.log"; exit 1; }
SIMDRV=$SMPI_BUILD/tsr_scale_driver
if [ $calibrate -eq 1 ]; then
  tsr_log "building the real driver ($REAL_BUILD)"
  cmake -S "$HERE" -B "$REAL_BUILD" -DCMAKE_BUILD_TYPE=Release -DTSR_SCALE_MODEL=OFF \
    >"$out/cmake-real.log" 2>&1 || { cat "$out/cmake-real.log"; exit 1; }
  cmake --build "$REAL_BUILD" --target tsr_scale_driver tsr_bench_bcast -j "${TSR_JOBS:-2}" \
    >"$out/build-real.log" 2>&1 || { tail -40 "$out/build-real.log"; exit 1; }
fi
REALDRV=$REAL_BUILD/tsr_scale_driver

part() { case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
RESULTS=$out/results.jsonl
: >"$RESULTS"
BCAST_SIM=$out/bcast-sim.jsonl
BCAST_REAL=$out/bcast-real.jsonl
TIMELINE=$out/timeline.jsonl
part bcast && : >"$BCAST_SIM"
# The smoke test always simulates; the full study resumes from DIR/done.txt (and keeps the
# time lines of the runs it reuses).
[ $smoke -eq 1 ] && rm -f "$out/done.txt"
part gpu && [ ! -f "$out/done.txt" ] && : >"$TIMELINE"
PLAT=$out/platforms
mkdir -p "$PLAT"

# sim TAGS TOPOLOGY P SPEED DRIVER-ARGS...: one simulated run, its JSON line tagged.
sim() {
  local tags=$1 topo=$2 P=$3 speed=$4
  shift 4
  local xml=$PLAT/$topo-$P-$speed.xml hosts=$PLAT/$topo-$P.hosts
  [ -f "$xml" ] || python3 "$HERE/make_platform.py" "$topo" "$P" "$xml" "$hosts" --speed "$speed" \
    ${SIM_NET:-}
  local t0 line key="$tags,topology=$topo,speed=$speed P=$P $*"
  # Runs already done in this DIR (same tags, platform and arguments) are reused: an
  # interrupted study resumes where it stopped.
  if [ -f "$out/done.txt" ] && line=$(grep -F -x -A1 "$key" "$out/done.txt" | sed -n 2p) &&
    [ -n "$line" ]; then
    echo "$line" >>"$RESULTS"
    echo "  (reused) $key"
    return 0
  fi
  t0=$(date +%s.%N)
  line=$(smpirun -np "$P" -platform "$xml" -hostfile "$hosts" --log=root.thres:critical \
    --cfg=smpi/simulate-computation:no --cfg=smpi/shared-malloc:global \
    --cfg=smpi/shared-malloc-blocksize:67108864 --cfg=smpi/privatization:no \
    --cfg=smpi/tmpdir:/dev/shm ${SIM_CFG:-} "$SIMDRV" --label "$tags,topology=$topo,speed=$speed" "$@" \
    2>>"$out/smpi.log" | grep '^{' | tail -1) || true
  if [ -z "$line" ]; then
    echo "run.sh: simulation failed: $tags $topo P=$P $*" >&2
    tail -20 "$out/smpi.log" >&2
    return 1
  fi
  python3 - "$line" "$t0" >>"$RESULTS" <<'EOF'
import json, sys, time
d = json.loads(sys.argv[1])
for kv in d.pop("label").split(","):
    k, _, v = kv.partition("=")
    d[k] = v
d["sim_wall_seconds"] = round(time.time() - float(sys.argv[2]), 1)
print(json.dumps(d))
EOF
  printf '%s\n%s\n' "$key" "$(tail -1 "$RESULTS")" >>"$out/done.txt"
  tail -1 "$RESULTS" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("  %-8s %-9s P=%-5s %-7s c=%-3s m=%s n=%s k=%s  %.4g s  %.3g GF/s/rank  words/rank %.3g  (%.0f s wall)" % (d["study"], d["topology"], d["P"], d["ran"], d["replicas"], d["m"], d["n"], d["k"], d["seconds"], d["gflops_per_rank"], d["words_mean"], d["sim_wall_seconds"]))'
}

# ---------------------------------------------------------------- calibration ----------
export OMP_NUM_THREADS=1
if [ $calibrate -eq 1 ] && part cpu; then
  tsr_log "calibration on this machine ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
  CAL=$out/calibration.jsonl
  N=${TSR_SCALE_CAL_N:-3072}
  ROUNDS=${TSR_SCALE_CAL_ROUNDS:-5}
  # TSR_SCALE_REUSE_CAL=1: keep the measurements of an earlier run in the same DIR.
  [ "${TSR_SCALE_REUSE_CAL:-0}" = 1 ] && [ -s "$CAL" ] && ROUNDS=0 || : >"$CAL"
  real() { mpirun -n "$1" --oversubscribe "$REALDRV" "${@:2}" | grep '^{' | tail -1; }
  for r in $(seq "$ROUNDS"); do
    for P in 1 2 4; do
      real "$P" -m "$N" -n "$N" -k "$N" --block 512 --repeat 3 --self 1 --label "cal=self" >>"$CAL"
      [ "$P" -gt 1 ] && real "$P" -m "$N" -n "$N" -k "$N" --block 512 --repeat 3 --label "cal=summa" >>"$CAL"
    done
  done
  if [ "$ROUNDS" -gt 0 ]; then
    real 2 --pingpong 8 --repeat 20 >>"$CAL"
    real 2 --pingpong 16777216 --repeat 10 >>"$CAL"
  fi
  read -r rate1 rate2 rate4 lat bw < <(python3 - "$CAL" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def rate(P):
    return statistics.median(r["gflops_per_rank"] for r in rows
                             if r.get("algorithm") == "self" and r["P"] == P)
lat = [r["one_way_seconds"] for r in rows if r.get("pingpong_bytes") == 8][0]
bw = [r["bandwidth_Bps"] for r in rows if r.get("pingpong_bytes", 0) > 8][0]
print("%.4g %.4g %.4g %.4g %.4g" % (rate(1), rate(2), rate(4), lat, bw))
EOF
  )
  echo "  local GEMM rate per rank: alone $rate1, 2 at once $rate2, 4 at once $rate4 GFLOP/s;" \
    "ping-pong latency $lat s, bandwidth $bw B/s"
  for P in 2 4; do
    r=$([ "$P" = 2 ] && echo "$rate2" || echo "$rate4")
    SIM_NET="--bw ${bw}Bps --lat ${lat}s --cores $P" \
      sim "study=validation" local "$P" "${r}Gf" -m "$N" -n "$N" -k "$N" --block 512
  done
  rate=${rate:-${rate1}Gf}
fi
rate=${rate:-20Gf}

# ---------------------------------------------------------------- the study ------------
if [ $smoke -eq 1 ]; then
  tsr_log "smoke study (P <= 16)"
  for P in 4 16; do
    sim "study=strong,node=cpu" fattree "$P" "$rate" -m 4096 -n 4096 -k 4096 --block 256
    sim "study=strong,node=cpu" fattree "$P" "$rate" -m 4096 -n 4096 -k 4096 --block 256 \
      --algorithm 2.5d --replicas 4
    sim "study=tall-k,node=cpu" fattree "$P" "$rate" -m 512 -n 512 -k 65536 --block 256 \
      --algorithm auto
  done
  sim "study=strong,node=cpu" dragonfly 16 "$rate" -m 4096 -n 4096 -k 4096 --block 256
elif [ "${TSR_SCALE_STUDY:-1}" = 1 ] && part cpu; then
  NODE_GPU=${TSR_SCALE_GPU_RATE:-40Tf}
  tsr_log "strong scaling, n = 65536, fat tree, node rate $rate"
  # 2.5D from P = 64: below, its replicated partial C (c n^2 / P per rank) and its messages
  # (GBs) make SMPI hold more memory than this machine has.
  for P in 4 16 64 256 1024; do
    sim "study=strong,node=cpu" fattree "$P" "$rate" -m 65536 -n 65536 -k 65536 --block 512
    [ "$P" -ge 64 ] || continue
    sim "study=strong,node=cpu" fattree "$P" "$rate" -m 65536 -n 65536 -k 65536 --block 512 \
      --algorithm 2.5d --replicas 4
  done
  tsr_log "GPU nodes ($NODE_GPU), n = 65536, fat tree"
  for P in 1024 256 64; do
    for c in 1 4 16; do
      [ "$P" -ge $((c * 64)) ] || [ "$c" = 1 ] || continue
      sim "study=strong,node=gpu" fattree "$P" "$NODE_GPU" -m 65536 -n 65536 -k 65536 \
        --block 512 --algorithm 2.5d --replicas "$c"
    done
  done
  tsr_log "weak scaling, 2048 x 2048 per rank, fat tree"
  for P in 4 16 64 256; do
    n=$(python3 -c "import math; print(int(2048 * math.isqrt($P)))")
    sim "study=weak,node=cpu" fattree "$P" "$rate" -m "$n" -n "$n" -k "$n" --block 512
    sim "study=weak,node=cpu" fattree "$P" "$rate" -m "$n" -n "$n" -k "$n" --block 512 \
      --algorithm 2.5d --replicas 4
  done
  tsr_log "tall and skinny shapes, P = 256"
  sim "study=tall-k,node=cpu" fattree 256 "$rate" -m 4096 -n 4096 -k 1048576 --block 512
  sim "study=tall-k,node=cpu" fattree 256 "$rate" -m 4096 -n 4096 -k 1048576 --block 512 \
    --algorithm auto
  sim "study=tall-m,node=cpu" fattree 256 "$rate" -m 1048576 -n 4096 -k 4096 --block 512
  sim "study=tall-m,node=cpu" fattree 256 "$rate" -m 1048576 -n 4096 -k 4096 --block 512 \
    --grid 256x1 --algorithm auto
  tsr_log "dragonfly, n = 32768, P = 256"
  sim "study=strong,node=cpu" dragonfly 256 "$rate" -m 32768 -n 32768 -k 32768 --block 512
  sim "study=strong,node=cpu" dragonfly 256 "$rate" -m 32768 -n 32768 -k 32768 --block 512 \
    --algorithm 2.5d --replicas 4
fi

# ---------------------------------------------------------------- broadcasts -----------
# bsim P SIZES ALGOS: the broadcast benchmark simulated on the fat tree (no compute; SMPI's
# injected MPI_Test time off: the pipelines poll); alpha beta of that platform (see bcast.c).
bsim() {
  local P=$1 xml=$PLAT/fattree-$1-bcast.xml hosts=$PLAT/fattree-$1.hosts
  [ -f "$xml" ] || python3 "$HERE/make_platform.py" fattree "$P" "$xml" "$hosts"
  TSR_BCAST_ALPHA_BETA=${TSR_SCALE_ALPHA_BETA:-1200000} smpirun -np "$P" -platform "$xml" \
    -hostfile "$hosts" --log=root.thres:critical --cfg=smpi/simulate-computation:no \
    --cfg=smpi/shared-malloc:global --cfg=smpi/privatization:no --cfg=smpi/test:0 \
    --cfg=smpi/tmpdir:/dev/shm "$SMPI_BUILD/tsr_bench_bcast" --rounds 1 --sizes "$2" \
    --algos "$3" 2>>"$out/smpi.log" | grep '^{' | tee -a "$BCAST_SIM" |
    python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    print("  bcast P=%-4d %9d B %-4s (%s) %.4g s" % (d["P"], d["bytes"], d["algo"], d["ran"], d["median_s"]))'
}
if part bcast; then
  if [ $calibrate -eq 1 ]; then
    tsr_log "broadcasts on this machine: MPI_Ibcast, ring, tree, auto (real mpirun, 2 and 4 ranks)"
    : >"$BCAST_REAL"
    for P in 2 4; do
      mpirun -n "$P" --oversubscribe "$REAL_BUILD/tsr_bench_bcast" --rounds "${TSR_SCALE_BCAST_ROUNDS:-9}" \
        ${TSR_SCALE_BCAST_SIZES:+--sizes "$TSR_SCALE_BCAST_SIZES"} --json "$BCAST_REAL" >/dev/null
    done
  fi
  tsr_log "broadcasts simulated on the fat tree"
  if [ $smoke -eq 1 ]; then
    bsim 16 8388608 mpi,ring,tree,auto
  else
    for P in 4 16 64; do bsim "$P" 1048576,8388608,67108864 mpi,ring,tree,auto; done
    bsim 256 1048576,8388608 mpi,ring,tree,auto
  fi
fi

# ---------------------------------------------------------------- GPU nodes ------------
# The H100 model (smpi_model.c): the library's SUMMA (look-ahead 2, summa.c) with its GEMMs on
# the modeled device, queued asynchronously while the host blocks in MPI_Waitany on the
# broadcasts and an alarm for the device (TSR_SMPI_GPU_POLL=0); one GEMM call per step (no CPU
# chunking); the fabric's alpha beta for the pipelined broadcast; SMPI's injected MPI_Test time
# off (smpi/test:0). Two fabric models (tag fabric=): smpi = SMPI's defaults (calibrated by
# SimGrid on a TCP cluster: large messages pay 11.6x the route latency and 0.94 of the
# bandwidth, and every flow loads its reverse route with its TCP acknowledgements,
# network/crosstraffic), rdma = an RDMA fabric (factors 1 and 0.97: 24.25 GB/s of a 25 GB/s
# link, no latency inflation, no cross traffic). TSR_SCALE_GPU_PS (default "16 64 256 1024")
# lists P, the smpi rows only up to TSR_SCALE_GPU_SMPI_MAXP (64: with cross traffic a run costs
# ~3x more); TSR_SCALE_GPU_NL ("16384") n_local; TSR_SCALE_GPU_PANELS (16) the panels of 1024
# columns of k. At n_local = 16384 every P also runs with twice the panels (tag panels2=1): the
# difference is the steady state of one step, from which report.py extends the run to k = n;
# SUMMA runs at the full k = n directly (tag kfull=1) up to P = TSR_SCALE_GPU_FULLK_SUMMA
# (default 256) to check that extension. TSR_SCALE_GPU_STRONG=1 adds strong scaling at
# n = 131072 (16 panels, and SUMMA against 2.5D c = 4 at k = n up to
# P = TSR_SCALE_GPU_STRONG_FULLK, default 256; 2.5D from P = 64). 2.5D (tag kfull=1): the full k = n, where its reduction of C (c n_local^2 words
# per rank, independent of k) is weighed against all of the multiply: TSR_SCALE_GPU_25D lists
# P:c (default "16:4 64:4"; P / c a perfect square, square P).
# Wall time on one core of an Emerald Rapids VM: P = 64 10 s per 16 panels, P = 256 55 s,
# P = 1024 about 15 minutes; SUMMA at k = n: P = 64 68 s, P = 256 about 15 minutes.
RDMA="--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:0.97 --cfg=network/crosstraffic:0"
# Folded memory in 1 GiB blocks: at P = 1024 every rank holds three 2 GiB matrices, and 64 MiB
# blocks would need more memory mappings than Linux gives a process (vm.max_map_count, 65530).
gsim() { TSR_SMPI_GPU=1 TSR_SUMMA_CHUNK_FLOPS=1e18 \
  TSR_BCAST_ALPHA_BETA=${TSR_SCALE_ALPHA_BETA:-1200000} \
  SIM_CFG="${SIM_CFG:-} --cfg=smpi/shared-malloc-blocksize:1073741824" sim "$@"; }
if part gpu; then
  GPU=57Tf # efficiency = rate / 57 TFLOP/s (the model's f64 rate at large shapes)
  PANELS=${TSR_SCALE_GPU_PANELS:-16}
  if [ $smoke -eq 1 ]; then
    tsr_log "GPU nodes, smoke (P = 16, n_local = 4096)"
    TSR_SMPI_GPU_POLL=1e-4 SIM_CFG="--cfg=smpi/test:0" gsim "study=gpu-weak,node=gpu,nl=4096,bcast=mpi,fabric=smpi" \
      fattree 16 $GPU -m 16384 -n 16384 -k 8192 --block 1024 --bcast mpi --timeline "$TIMELINE"
    SIM_CFG="--cfg=smpi/test:0" gsim "study=gpu-weak,node=gpu,nl=4096,bcast=auto,fabric=smpi" \
      fattree 16 $GPU -m 16384 -n 16384 -k 8192 --block 1024 --bcast auto --timeline "$TIMELINE"
    # the same with the polled host: report.py --check-smoke compares the two
    TSR_SMPI_GPU_POLL=25e-6 SIM_CFG="--cfg=smpi/test:0" gsim "study=gpu-weak,node=gpu,nl=4096,bcast=auto,fabric=smpi,hostwait=poll" \
      fattree 16 $GPU -m 16384 -n 16384 -k 8192 --block 1024 --bcast auto
  else
    GPU_PS=${TSR_SCALE_GPU_PS:-16 64 256 1024}
    for nl in ${TSR_SCALE_GPU_NL:-16384}; do
      tsr_log "GPU nodes, weak scaling, n_local = $nl, k = $PANELS panels of 1024"
      for P in $GPU_PS; do
        n=$(python3 -c "import math; print($nl * math.isqrt($P))")
        k=$((PANELS * 1024))
        tl=()
        # one rank's time line at the largest P, n_local = 16384
        [ "$P" = "${GPU_PS##* }" ] && [ "$nl" = 16384 ] && tl=(--timeline "$TIMELINE")
        if [ "$P" -le "${TSR_SCALE_GPU_SMPI_MAXP:-64}" ]; then
          # MPI_Ibcast: the polled host (the same time for any interval, 1 us .. 1 ms, and the
          # same as with the alarm's waits: P = 16 0.263307 s, P = 64 0.433317 s)
          TSR_SMPI_GPU_POLL=1e-4 SIM_CFG="--cfg=smpi/test:0" gsim "study=gpu-weak,node=gpu,nl=$nl,bcast=mpi,fabric=smpi" \
            fattree "$P" $GPU -m "$n" -n "$n" -k "$k" --block 1024 --bcast mpi "${tl[@]}"
          SIM_CFG="--cfg=smpi/test:0" gsim "study=gpu-weak,node=gpu,nl=$nl,bcast=auto,fabric=smpi" \
            fattree "$P" $GPU -m "$n" -n "$n" -k "$k" --block 1024 --bcast auto "${tl[@]}"
        fi
        SIM_CFG="--cfg=smpi/test:0 $RDMA" gsim "study=gpu-weak,node=gpu,nl=$nl,bcast=auto,fabric=rdma" \
          fattree "$P" $GPU -m "$n" -n "$n" -k "$k" --block 1024 --bcast auto "${tl[@]}"
        [ "$nl" = 16384 ] || continue
        SIM_CFG="--cfg=smpi/test:0 $RDMA" gsim "study=gpu-weak,node=gpu,nl=$nl,bcast=auto,fabric=rdma,panels2=1" \
          fattree "$P" $GPU -m "$n" -n "$n" -k $((2 * k)) --block 1024 --bcast auto
      done
      [ "$nl" = 16384 ] || continue
      for P in $GPU_PS; do
        [ "$P" -le "${TSR_SCALE_GPU_FULLK_SUMMA:-256}" ] || continue
        n=$(python3 -c "import math; print($nl * math.isqrt($P))")
        tsr_log "GPU nodes, weak scaling, n_local = $nl, P = $P, SUMMA at k = n"
        SIM_CFG="--cfg=smpi/test:0 $RDMA" gsim "study=gpu-weak,node=gpu,nl=$nl,bcast=auto,fabric=rdma,kfull=1" \
          fattree "$P" $GPU -m "$n" -n "$n" -k "$n" --block 1024 --bcast auto
      done
      for pc in ${TSR_SCALE_GPU_25D:-16:4 64:4}; do
        P=${pc%%:*} c=${pc##*:}
        n=$(python3 -c "import math; print($nl * math.isqrt($P))")
        tsr_log "GPU nodes, weak scaling, n_local = $nl, P = $P, k = n: 2.5D c = $c"
        SIM_CFG="--cfg=smpi/test:0 $RDMA" gsim "study=gpu-weak,node=gpu,nl=$nl,bcast=auto,fabric=rdma,kfull=1" \
          fattree "$P" $GPU -m "$n" -n "$n" -k "$n" --block 1024 --bcast auto --algorithm 2.5d --replicas "$c"
      done
    done
    if [ "${TSR_SCALE_GPU_STRONG:-0}" = 1 ]; then
      tsr_log "GPU nodes, strong scaling, n = 131072, k = $PANELS panels of 1024"
      for P in $GPU_PS; do
        SIM_CFG="--cfg=smpi/test:0 $RDMA" gsim "study=gpu-strong,node=gpu,bcast=auto,fabric=rdma" \
          fattree "$P" $GPU -m 131072 -n 131072 -k $((PANELS * 1024)) --block 1024 --bcast auto
      done
      # SUMMA against 2.5D c = 4 at the full k = n, up to P = TSR_SCALE_GPU_STRONG_FULLK (256)
      for P in $GPU_PS; do
        [ "$P" -le "${TSR_SCALE_GPU_STRONG_FULLK:-256}" ] || continue
        tsr_log "GPU nodes, strong scaling, n = 131072, P = $P, k = n: SUMMA and 2.5D c = 4"
        for alg in summa "2.5d --replicas 4"; do
          # 2.5D from P = 64: at P = 16 its 2 x 2 layers hold 65536^2 f64 blocks (32 GiB a
          # rank), a folded allocation the kernel's overcommit heuristic refuses here.
          [ "$alg" = summa ] || [ "$P" -ge 64 ] || continue
          # shellcheck disable=SC2086
          SIM_CFG="--cfg=smpi/test:0 $RDMA" gsim "study=gpu-strong,node=gpu,bcast=auto,fabric=rdma,kfull=1" \
            fattree "$P" $GPU -m 131072 -n 131072 -k 131072 --block 1024 --bcast auto --algorithm $alg
        done
      done
    fi
  fi
fi

tsr_log "report"
args=("$RESULTS" "$out" --bcast-sim "$BCAST_SIM" --timeline "$TIMELINE" --parts "$parts")
[ -s "$BCAST_REAL" ] && part bcast && [ $calibrate -eq 1 ] && args+=(--bcast-real "$BCAST_REAL")
[ -f "$out/calibration.jsonl" ] && [ $calibrate -eq 1 ] && args+=(--calibration "$out/calibration.jsonl")
if [ $smoke -eq 0 ]; then
  args+=(--doc "$ROOT/docs/scaling.md")
else
  args+=(--check-smoke)
fi
"$PY" "$HERE/report.py" "${args[@]}"
