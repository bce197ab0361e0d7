#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck disable=SC2317 # the steps are called by name (step_$name)
# One call on a lent GPU (issue 48): at most 8 minutes that deliver, in order,
#   1 build    tessera-gemm (and bench_gpu when there is no PyTorch), CUDA variant, Release,
#              the GPU's own sm_XY, -j<cores>; an existing build tree is reused
#   2 job      tessera-gemm on 1 rank, f32/f64 x n = 8192/16384, TSR_GEMM = auto, vendor and
#              native (--repeat 3 --warmup 1 --json); then complex c64/c128 at the same sizes,
#              TSR_GEMM = auto (issue 50; GFLOP/s count 8 n^3 real flops)
#   3 anchor   cuBLAS on the same GPU: PyTorch with TF32 off (checked against float64), else
#              bench_gpu's cuBLAS rows; then the job's figures over the anchor
#   4 ranks    2 and 4 ranks sharing the GPU, f32/f64 at n = 8192, with the --json pipeline
#              counts (staging, steps, copies, host syncs, copy waits)
#   5 npy      products of real .npy inputs (data/, shared/data/ and /work/shared/data when
#              present: X X^T and X^T X) and generated ones (C and Fortran order, big-endian,
#              transposes, alpha/beta with C, 1/2/4 ranks, auto/native/vendor), each output
#              checked against NumPy's float64 product R (elementwise |C - R| <= 2 k u |A||B|
#              + u |R|, and ||C - R||_F <= 3 u sqrt(k) || |A||B| ||_F: catches TF32);
#              without NumPy, a pure-Python float64 product (small cases) or the job's own
#              float64 verification, and the summary says which
#   6 tests    the CUDA tests: ctest -L cuda -LE gpu_large on the same build (their programs
#              built first), with the list of failures and of tests the budget left unrun
#
# Usage: scripts/gpu_session.sh [--device cuda|cpu] [--out DIR] [--budget SECONDS]
#                               [--build DIR] [--help]
#        scripts/gpu_session.sh prepare     (here, once: see "Before the call")
#   --device cpu   a dry run on the CPU: the same steps on a CPU build (build/gpu-session-cpu,
#                  or --build), n = 128/256, ranks at n = 256, a few seconds a step; the
#                  anchor step reports "skipped: no GPU"; step 6 runs a few CPU tests
#                  (TSR_GPU_SESSION_CTEST_ARGS). CI runs it: scripts/test.d/gpu_session.sh.
#   --out DIR      results (default $OUT, else ./gpu-session-out)
#   --budget S     the whole call's seconds (default 480); every step's budget scales with it
#   --build DIR    the build tree (default build/gpu-session, cpu: build/gpu-session-cpu)
#
# Before the call (here, on a machine with apt and network; no GPU needed):
#   scripts/gpu_session.sh prepare
# downloads the Debian packages the device image lacks (Open MPI, cmocka and their libraries)
# into .gpu_debs/ (git-ignored; 40 packages, about 16 MiB); the image has nvcc, CMake, ninja,
# python3 with NumPy and PyTorch, compute-sanitizer and ncu.
#
# THE CALL (one, 8 minutes; the machine's start, 1-2 minutes, comes on top):
#   run(command="scripts/gpu_session.sh", carry=[".gpu_debs"], timeout_s=480)
# The script stops itself inside its budget (default 480 s; the steps end 20 s before it),
# so timeout_s=480 is not reached; with a smaller timeout_s pass --budget the same number.
# Then give_back() unless a rerun follows at once.
#
# Budgets (seconds, for --budget 480; scaled with --budget; TSR_GPU_SESSION_BUDGET_<STEP>,
# e.g. TSR_GPU_SESSION_BUDGET_JOB=60, sets one step's budget as is): build 150, job 130,
# anchor 40, ranks 50, npy 45, tests: what is left (at least 45 s; more when earlier steps end
# early, as they do when all goes well: a step's unused budget goes to the tests). Each run
# inside a step has its own timeout too (a 16384 job run 60 s, an 8192 one 30 s), cut to what
# is left of its step; a run the step's budget cannot start is reported "not run", and a step
# whose budget ran out is reported "timed out" and the next step starts. The console shows each
# step's budget and elapsed time, and each run's. Expected on an H200 (not yet measured): build
# 80-100 s (the long pole is gemm_sup_avx512_f32.c, ~45 s of one core), job 60-90 s (and
# 20-40 s for the complex runs, not measured: a budget that runs out leaves them "not run"), anchor
# 15-25 s, ranks 20-40 s, npy 30-40 s; the rest, about 2-4 minutes, for the tests.
#
# Reading the results: at most 8 files come back from $OUT, all written as they arrive, so a
# killed call keeps what was done:
#   summary.md     the machine (GPU, driver, nvcc, MPI's CUDA support, NumPy, PyTorch), one
#                  line per step (result, elapsed, budget, note; "running" for the step in
#                  flight when the call was killed, "not reached" after it), then one table per
#                  step: the job's GFLOP/s per dtype, size and TSR_GEMM with the path that ran;
#                  the anchor and the ratios; the ranks' pipeline counts; each real-input
#                  product with its error against the float64 reference; the tests' counts and
#                  the list of failed and unrun tests. The console ends with the same text.
#   results.tsv    one row per run (columns: step case ranks dtype m n k gemm path gflops
#                  compute_s gpu_s input_s staging steps h2d_copies d2h_copies host_syncs
#                  host_syncs_in_loop copy_waits check status seconds note; the complex job runs
#                  have step job_complex)
#   1-build.log .. 6-tests.log   every command of the step with its budget, elapsed time and
#                  output (the job's JSON reports, ctest --output-on-failure)
# The work files (JSON reports, .npy inputs and outputs, ctest logs) stay in
# TSR_GPU_SESSION_WORK (default a new folder under /tmp), named in summary.md.
#
# Exit status: 0 when every step passed or was skipped, 1 otherwise, 2 on bad usage.
# Environment: OUT, TSR_GPU_SESSION_BUDGET_<BUILD|JOB|ANCHOR|RANKS|NPY|TESTS>,
# TSR_GPU_SESSION_BUILD (the build tree, as --build), TSR_GPU_SESSION_WORK,
# TSR_GPU_SESSION_PYTHON (the python3 for NumPy), TSR_GPU_SESSION_SIZES (step 2's n, default
# "8192 16384", cpu "128 256"), TSR_GPU_SESSION_RANKS_N (step 4's n), TSR_GPU_SESSION_CTEST_ARGS
# (step 6's test selection; cuda: "-L cuda -LE gpu_large"), TSR_GPU_SESSION_TESTS_ENV (VAR=VALUE
# words for the tests' environment), TSR_JOBS (build parallelism, default nproc).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
self=$root/scripts/gpu_session.sh
helper=$root/scripts/gpu_session/session.py
# shellcheck source=scripts/common.sh disable=SC1091
source "$root/scripts/common.sh" # tsr_variant_args, TSR_JOBS, OMPI_ALLOW_RUN_AS_ROOT*
set +e                           # common.sh sets -e: a failed run must not end the session
set -o pipefail

usage() { awk 'NR > 1 && /^# (shellcheck|SPDX)/ { next } NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$self"; }

debs=$root/.gpu_debs
deproot=/tmp/tsr_gpu_deps
steps=(build job anchor ranks npy tests)
# Budgets for the default 480 s; tests take what is left.
declare -A base_budget=([build]=150 [job]=130 [anchor]=40 [ranks]=50 [npy]=45 [tests]=0)

# ------------------------------------------------------------------------------ prepare ----
prepare() {
  mkdir -p "$debs" # git-ignored (.gitignore), so the device tool carries it only when named
  # cmocka for the tests; Open MPI and the libraries it loads (Debian 12 names).
  local pkgs=(libcmocka0 libcmocka-dev openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev
              libpmix2 libhwloc15 libhwloc-plugins libevent-core-2.1-7 libevent-pthreads-2.1-7
              libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 libibverbs1 librdmacm1 libnl-3-200
              libnl-route-3-200 libxnvctrl0 libmunge2 libltdl7 libnuma1 libopenblas0
              libopenblas0-pthread libgfortran5 libcurl4 libnghttp2-14 librtmp1 libssh2-1
              libpsl5 libldap-2.5-0 libsasl2-2 libbrotli1 libudev1 libgomp1 libquadmath0
              pkgconf pkgconf-bin libpkgconf3)
  local missing=() p
  for p in "${pkgs[@]}"; do
    (cd "$debs" && apt-get download "$p" >/dev/null 2>&1) || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || echo "prepare: not downloadable here: ${missing[*]}" >&2
  du -sh "$debs"
  find "$debs" -name '*.deb' | wc -l
}

# Unpacks the carried packages into $deproot (never into /) and points the tools at them.
use_deps() {
  [ -d "$debs" ] || return 0
  if [ ! -d "$deproot/usr" ]; then
    mkdir -p "$deproot"
    for f in "$debs"/*.deb; do dpkg -x "$f" "$deproot"; done
  fi
  local multi=$deproot/usr/lib/x86_64-linux-gnu f
  # Debian names Open MPI's tools mpicc.openmpi etc. and links mpicc to them at install time.
  mkdir -p "$deproot/bin"
  for f in "$deproot"/usr/bin/*.openmpi; do
    [ -e "$f" ] && ln -sf "$f" "$deproot/bin/$(basename "$f" .openmpi)"
  done
  export PATH=$deproot/bin:$deproot/usr/bin:$PATH
  export LD_LIBRARY_PATH=$multi:$multi/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Only the unpacked packages' .pc files, their /usr paths moved under $deproot.
  export PKG_CONFIG_LIBDIR=$multi/pkgconfig:$deproot/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$deproot
  export CMAKE_PREFIX_PATH=$deproot/usr
  export OPAL_PREFIX=$deproot/usr # relocated Open MPI finds its help and component files
  export OMPI_MCA_plm_rsh_agent=false
}

# ------------------------------------------------------------------------------ shared -----
now() { date +%s; }
# Python with the environment the script started with (the carried libraries stay out).
pyrun() { env PATH="$GS_PATH0" LD_LIBRARY_PATH="$GS_LDPATH0" "$@"; }
# The console (fd 3 in a step, which writes its log on stdout).
say() { echo "[+$(($(now) - GS_T0)) s] $*" >&"${GS_CONSOLE_FD:-1}"; }

# set_step IDX NAME RESULT ELAPSED BUDGET NOTE: the step's line of the summary.
set_step() {
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$5" "${6//|//}" \
    >"$GS_WORK/state/step.$1"
}

# Rewrites summary.md from its parts (atomically: a reader never sees half a file).
compose() {
  local i
  {
    cat "$GS_WORK/header.md"
    printf '\n## Steps\n\n| # | step | result | elapsed | budget | note |\n| --- | --- | --- | --- | --- | --- |\n'
    for i in 1 2 3 4 5 6; do
      if [ -f "$GS_WORK/state/step.$i" ]; then
        cat "$GS_WORK/state/step.$i"
      else
        printf '| %s | %s | not reached | - | - | |\n' "$i" "${steps[$((i - 1))]}"
      fi
    done
    for i in 1 2 3 4 5 6; do
      if [ -s "$GS_WORK/md.$i" ]; then echo; cat "$GS_WORK/md.$i"; fi
    done
    if [ -s "$GS_WORK/footer.md" ]; then echo; cat "$GS_WORK/footer.md"; fi
  } >"$GS_OUT/summary.md.tmp" && mv -f "$GS_OUT/summary.md.tmp" "$GS_OUT/summary.md"
}

# Ends the processes this session started that outlived their step (mpirun's ranks after a
# kill): each one found by the tag in its environment, ended by its id.
sweep() {
  local p e
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}
    p=${p%/environ}
    [ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
    if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "TSR_GS_TAG=$GS_TAG"; then
      kill -KILL "$p" 2>/dev/null && echo "ended leftover process $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | head -c 120)"
    fi
  done
}

# ------------------------------------------------------------------------------ a step -----
# The step runs as its own process (`gpu_session.sh __step IDX NAME`), its output in its log,
# killed by the parent 10 s after its budget at the latest. Inside, `sub` runs each command
# with its own timeout, cut to what is left of the step.
n_runs=0 n_failed=0 n_killed=0 n_unstarted=0 budget_hit=0 skip_reason="" extra_note=""
SUB_RC=0 SUB_SECS=0 SUB_LOG=""

# sub LABEL CAP CMD...: CMD (stdin from /dev/null) with output in the step log and in
# $GS_WORK/runs/LABEL.log, killed after CAP seconds or at the step's end, whichever is first.
sub() {
  local label=$1 cap=$2 left t t0 rc why
  shift 2
  n_runs=$((n_runs + 1))
  SUB_LOG=$GS_WORK/runs/$GS_STEP_IDX-$label.log
  left=$((GS_STEP_END - $(now)))
  t=$cap
  [ "$left" -lt "$t" ] && t=$left
  if [ "$t" -lt 1 ]; then
    n_unstarted=$((n_unstarted + 1))
    echo "== $label: not run: the step's budget is spent"
    say "    $label: not run (the step's budget is spent)"
    SUB_RC=125 SUB_SECS=0
    return 125
  fi
  echo "== $label: timeout $t s (own cap $cap s, $left s left in the step)"
  echo "\$ $*"
  t0=$(now)
  timeout -k 5 "$t" "$@" </dev/null 2>&1 | tee "$SUB_LOG"
  rc=${PIPESTATUS[0]}
  SUB_SECS=$(($(now) - t0)) SUB_RC=$rc
  case $rc in
    0) why=passed ;;
    124 | 137)
      if [ "$t" -lt "$cap" ]; then
        budget_hit=1
        why="timed out (the step's budget)"
      else
        why="timed out (its own cap of $cap s)"
      fi
      n_killed=$((n_killed + 1))
      ;;
    *) why="FAILED (exit $rc)"; n_failed=$((n_failed + 1)) ;;
  esac
  echo "== $label: $why in $SUB_SECS s"
  say "    $label: $why in $SUB_SECS s (timeout $t s)"
  return "$rc"
}

finish_step() {
  local result note
  note="$n_runs run(s): $((n_runs - n_failed - n_killed - n_unstarted)) passed"
  [ "$n_failed" -gt 0 ] && note+=", $n_failed failed"
  [ "$n_killed" -gt 0 ] && note+=", $n_killed killed by a timeout"
  [ "$n_unstarted" -gt 0 ] && note+=", $n_unstarted not run"
  [ -n "$extra_note" ] && note+="; $extra_note"
  if [ -n "$skip_reason" ]; then
    result=skipped note="$skip_reason"
  elif [ "$budget_hit" -eq 1 ] || [ "$n_unstarted" -gt 0 ]; then
    result="timed out" note="the step's budget ran out: $note"
  elif [ "$n_failed" -gt 0 ] || [ "$n_killed" -gt 0 ]; then
    result=FAILED
  else
    result=passed
  fi
  printf '%s\t%s\n' "$result" "$note" >"$GS_WORK/state/result.$GS_STEP_IDX"
}

md() { cat >>"$GS_WORK/md.$GS_STEP_IDX"; }
status_of() {
  case $1 in
    0) echo passed ;; 124 | 137) echo "timed out" ;; 125) echo "not run" ;; *) echo "FAILED (exit $1)" ;;
  esac
}
need_cli() {
  [ -x "$GS_CLI" ] && return 0
  skip_reason="no tessera-gemm at $GS_CLI (step 1 failed)"
  return 1
}
# MPI=(mpirun for NP ranks): more ranks than cores allowed.
mpi_cmd() {
  MPI=(mpirun -np "$1")
  [ "$1" -gt 1 ] && MPI=(mpirun --oversubscribe -np "$1")
  return 0
}
record_job() { # JSON STEP CASE GEMM
  pyrun "$GS_PY" "$helper" job "$1" --tsv "$GS_OUT/results.tsv" --md "$GS_WORK/md.$GS_STEP_IDX" \
    --step "$2" --case "$3" --gemm "$4" --rc "$SUB_RC" --secs "$SUB_SECS" --log "$SUB_LOG"
  compose
}

# ------------------------------------------------------------------------------ 1 build ----
step_build() {
  local args=() gen=() arch targets=(tessera-gemm) t0
  printf '## 1. Build\n\n' | md
  if [ -f "$GS_BUILD/CMakeCache.txt" ]; then
    echo "- reused the configured tree $GS_BUILD" | md
  else
    read -r -a args <<<"$(tsr_variant_args "$GS_VARIANT")"
    if [ "$GS_DEVICE" = cuda ]; then
      arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
      case $arch in '' | *[!0-9]*) arch=90 ;; esac
      args+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
    fi
    if ! pkg-config --exists cmocka 2>/dev/null; then
      args+=(-DTESSERA_BUILD_TESTS=OFF)
      extra_note="no cmocka: tests not configured (carry .gpu_debs)"
    fi
    command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
    sub configure 120 cmake -S "$root" -B "$GS_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      "${args[@]}"
    echo "- configured $GS_BUILD in $SUB_SECS s: ${args[*]}" | md
  fi
  [ "$GS_DEVICE" = cuda ] && [ -z "$GS_TORCH" ] && targets+=(bench_gpu)
  if [ -f "$GS_BUILD/CMakeCache.txt" ]; then
    t0=$(now)
    sub build 600 cmake --build "$GS_BUILD" -j "$TSR_JOBS" --target "${targets[@]}"
    echo "- built ${targets[*]} (-j $TSR_JOBS) in $SUB_SECS s: $(
      [ "$SUB_RC" -eq 0 ] && echo ok || echo "FAILED (exit $SUB_RC), see 1-build.log")" | md
  fi
  [ -x "$GS_CLI" ] && echo "- $GS_CLI: $("$GS_CLI" --help 2>/dev/null | head -1)" | md
}

# ------------------------------------------------------------------------------ 2 job ------
step_job() {
  local n dt g json cap vf
  need_cli || return 0
  printf '## 2. The job on 1 rank (tessera-gemm --device %s, --repeat %s --warmup 1)\n\n' \
    "$GS_DEV" "$GS_REPEAT" | md
  printf '| case | TSR_GEMM | path ran | GFLOP/s | compute s | GPU s | input s | verify | result |\n' | md
  printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n' | md
  compose
  for n in $GS_SIZES; do
    cap=30
    [ "$n" -ge 16384 ] && cap=60
    for dt in f32 f64; do
      for g in auto vendor native; do
        json=$GS_WORK/json/np1_${dt}_${n}_$g.json
        rm -f "$json"
        mpi_cmd 1
        sub "np1_${dt}_${n}_$g" "$cap" env TSR_GEMM="$g" "${MPI[@]}" "$GS_CLI" \
          --device "$GS_DEV" -m "$n" -n "$n" -k "$n" --dtype "$dt" --repeat "$GS_REPEAT" \
          --warmup 1 --json "$json"
        [ -f "$json" ] && cat "$json"
        record_job "$json" job "$dt $n" "$g"
      done
    done
  done
  # Complex (issue 50) at the same sizes, after the real runs (a budget that runs out leaves
  # these "not run", never a real one); TSR_GEMM=auto, the path the user gets. Verified at every
  # size: the complex Freivalds check reads the matrices where they live (the device's real
  # matrix-vector kernel on their parts, src/mpi/verify.c).
  for n in $GS_SIZES; do
    cap=30
    [ "$n" -ge 16384 ] && cap=60
    for dt in c64 c128; do
      json=$GS_WORK/json/np1_${dt}_${n}_auto.json
      rm -f "$json"
      mpi_cmd 1
      vf=--verify
      sub "np1_${dt}_${n}_auto" "$cap" env TSR_GEMM=auto "${MPI[@]}" "$GS_CLI" \
        --device "$GS_DEV" -m "$n" -n "$n" -k "$n" --dtype "$dt" --repeat "$GS_REPEAT" \
        --warmup 1 "$vf" --json "$json"
      [ -f "$json" ] && cat "$json"
      record_job "$json" job_complex "$dt $n" auto
    done
  done
}

# ------------------------------------------------------------------------------ 3 anchor ---
step_anchor() {
  local json=$GS_WORK/json/bench_gpu.json sizes=${GS_SIZES// /,}
  printf '## 3. cuBLAS anchor\n\n' | md
  if [ "$GS_DEVICE" = cpu ]; then
    skip_reason="skipped: no GPU (dry run on the CPU)"
    echo "Skipped: no GPU (dry run on the CPU)." | md
    pyrun "$GS_PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import session as s
s.tsv_row(sys.argv[2], step="anchor", case="cuBLAS", status="skipped: no GPU")' \
      "$root/scripts/gpu_session" "$GS_OUT/results.tsv"
    return 0
  fi
  printf '| dtype | n | anchor | GFLOP/s | median s (spread) | check |\n| --- | --- | --- | --- | --- | --- |\n' | md
  compose
  if [ -n "$GS_TORCH" ]; then
    sub torch 90 env PYTHONUNBUFFERED=1 PATH="$GS_PATH0" \
      LD_LIBRARY_PATH="$GS_LDPATH0" "$GS_TORCH" "$helper" anchor-torch --sizes "$sizes" \
      --reps 7 --tsv "$GS_OUT/results.tsv" --md "$GS_WORK/md.$GS_STEP_IDX"
    [ "$SUB_RC" -eq 0 ] ||
      echo "PyTorch: $(status_of "$SUB_RC"): $(tail -n 1 "$SUB_LOG" 2>/dev/null)" | md
  fi
  # bench_gpu without PyTorch, or when it failed (10: it measured, but f32 looked like TF32).
  if [ -z "$GS_TORCH" ] || { [ "$SUB_RC" -ne 0 ] && [ "$SUB_RC" -ne 10 ]; }; then
    [ -n "$GS_TORCH" ] && extra_note="PyTorch failed: bench_gpu instead"
    [ -x "$GS_BUILD/bench/bench_gpu" ] ||
      sub build_bench_gpu 120 cmake --build "$GS_BUILD" -j "$TSR_JOBS" --target bench_gpu
    rm -f "$json"
    if sub bench_gpu 120 "$GS_BUILD/bench/bench_gpu" --sizes "$sizes" --reps 3 --no-skinny \
      --bw-log2 20 --json "$json"; then
      pyrun "$GS_PY" "$helper" anchor-bench "$json" --tsv "$GS_OUT/results.tsv" \
        --md "$GS_WORK/md.$GS_STEP_IDX"
    else
      echo "bench_gpu: $(status_of "$SUB_RC"): $(tail -n 1 "$SUB_LOG" 2>/dev/null)" | md
    fi
  fi
  pyrun "$GS_PY" "$helper" ratios --tsv "$GS_OUT/results.tsv" --md "$GS_WORK/md.$GS_STEP_IDX"
}

# ------------------------------------------------------------------------------ 4 ranks ----
step_ranks() {
  local np dt json n=$GS_RANKS_N
  need_cli || return 0
  printf '## 4. Ranks sharing the %s (n = %s, TSR_GEMM=auto, --json pipeline counts)\n\n' \
    "$([ "$GS_DEVICE" = cuda ] && echo GPU || echo CPU)" "$n" | md
  printf '| case | TSR_GEMM | path ran | GFLOP/s | compute s | staging | steps | H2D/D2H copies | host syncs/in loop | copy waits | verify | result |\n' | md
  printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n' | md
  compose
  for np in 2 4; do
    for dt in f32 f64; do
      json=$GS_WORK/json/np${np}_${dt}_$n.json
      rm -f "$json"
      mpi_cmd "$np"
      sub "np${np}_${dt}_$n" 45 "${MPI[@]}" "$GS_CLI" --device "$GS_DEV" \
        -m "$n" -n "$n" -k "$n" --dtype "$dt" --repeat "$GS_REPEAT" --warmup 1 --json "$json"
      [ -f "$json" ] && cat "$json"
      record_job "$json" ranks "np$np $dt $n" auto
    done
  done
}

# ------------------------------------------------------------------------------ 5 npy ------
step_npy() {
  local dir=$GS_WORK/npy dirs=() d seed line name a b c ranks g flags alpha beta out json args f
  need_cli || return 0
  mkdir -p "$dir"
  for d in "$root/data" "$root/shared/data" /work/shared/data; do
    [ -d "$d" ] && dirs+=(--data "$d")
  done
  seed=$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') % 1000000 ))
  printf '## 5. Real inputs against a float64 reference (seed %s)\n\n' "$seed" | md
  if pyrun "$GS_PY" -c 'import numpy' 2>/dev/null; then
    echo "Reference: NumPy's float64 product of the same inputs ($GS_PY). With M = |alpha| |op A| |op B| + |beta| |C0| and u the dtype's unit roundoff, a product passes when |C - R| <= 2 k u M + u |R| elementwise (the worst case) and ||C - R||_F <= 3 u sqrt(k) ||M||_F (catches lower precision, TF32 say); NaN never passes." | md
  else
    echo "No NumPy here ($GS_PY): generated inputs are small, written by pure Python, and checked against a pure-Python float64 product; real inputs too large for it rely on the job's own float64 verification (said per case)." | md
  fi
  printf '\n| case | m x n x k | dtype | op | ranks | TSR_GEMM/path | job verify | check | result |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n' | md
  compose
  sub make_inputs 60 env PATH="$GS_PATH0" LD_LIBRARY_PATH="$GS_LDPATH0" "$GS_PY" "$helper" \
    npy-make "$dir" --cases "$dir/cases.tsv" \
    --mode "$GS_DEVICE" --seed "$seed" "${dirs[@]}" || return 0
  while IFS=$'\t' read -r name a b c ranks g flags alpha beta; do
    line=$(printf '%s\t' "$name" "$a" "$b" "$c" "$ranks" "$g" "$flags" "$alpha" "$beta")
    line=${line%$'\t'}
    out=$dir/out_$name.npy json=$GS_WORK/json/npy_$name.json
    rm -f "$out" "$json"
    args=(-a "$a" -b "$b")
    [ "$flags" != - ] && read -r -a f <<<"$flags" && args+=("${f[@]}")
    [ "$c" != - ] && args+=(-c "$c" --alpha="$alpha" --beta="$beta")
    mpi_cmd "$ranks"
    sub "$name" 40 env TSR_GEMM="$g" "${MPI[@]}" "$GS_CLI" \
      --device "$GS_DEV" "${args[@]}" -o "$out" --json "$json"
    pyrun "$GS_PY" "$helper" npy-check "$line" --tsv "$GS_OUT/results.tsv" \
      --md "$GS_WORK/md.$GS_STEP_IDX" --rc "$SUB_RC" --secs "$SUB_SECS" --output "$out" \
      --json "$json" || { [ "$SUB_RC" -eq 0 ] && n_failed=$((n_failed + 1)); }
    compose
  done <"$dir/cases.tsv"
}

# ------------------------------------------------------------------------------ 6 tests ----
step_tests() {
  local sel=() targets list log stop jobs=4 t
  printf '## 6. Tests (ctest on %s)\n\n' "$GS_BUILD" | md
  if [ ! -f "$GS_BUILD/tests/CTestTestfile.cmake" ]; then
    skip_reason="no tests in $GS_BUILD (configured without cmocka: carry .gpu_debs)"
    echo "$skip_reason" | md
    return 0
  fi
  if [ -n "${TSR_GPU_SESSION_CTEST_ARGS:-}" ]; then
    read -r -a sel <<<"$TSR_GPU_SESSION_CTEST_ARGS"
  elif [ "$GS_DEVICE" = cuda ]; then
    sel=(-L cuda -LE gpu_large)
  else
    sel=(-L cpu -R '^(core_status|core_views|core_matmul)_cpu$')
    jobs=2
  fi
  echo "Selection: \`ctest ${sel[*]}\`${TSR_GPU_SESSION_TESTS_ENV:+ with $TSR_GPU_SESSION_TESTS_ENV}$(
    [ "$GS_DEVICE" = cuda ] && echo " (gpu_large, 40 GiB and up to 300 s, left out)")." | md
  list=$GS_WORK/tests.json
  (cd "$GS_BUILD" && ctest --show-only=json-v1 "${sel[@]}") >"$list" 2>/dev/null
  # The programs the selected tests run, built before the run: the build tree's programs in
  # their commands, and for a program not built yet (no command) the test's name, or the
  # name less its backend (the suite's core_matmul runs as core_matmul_cuda), when a target.
  (cd "$GS_BUILD" && cmake --build . --target help) >"$GS_WORK/targets.txt" 2>/dev/null
  targets=$(pyrun "$GS_PY" -c '
import json, os, re, sys
b = os.path.realpath(sys.argv[2]); out = set()
known = set(re.findall(r"[A-Za-z0-9_.+-]+", open(sys.argv[3]).read()))
for t in json.load(open(sys.argv[1])).get("tests", []):
    cmd = t.get("command") or []
    for arg in cmd:
        if os.path.isabs(arg) and os.path.realpath(arg).startswith(b + os.sep):
            out.add(os.path.basename(arg))
    if not cmd:
        name = t["name"]
        for c in (name, re.sub(r"_(cpu|cuda|hip)$", "", name)):
            if c in known:
                out.add(c)
                break
print(" ".join(sorted(out & known)))' "$list" "$GS_BUILD" "$GS_WORK/targets.txt" 2>/dev/null)
  local count
  count=$(pyrun "$GS_PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tests"]))' \
    "$list" 2>/dev/null)
  if [ "${count:-0}" -eq 0 ]; then
    skip_reason="no test matches \`ctest ${sel[*]}\` in $GS_BUILD"
    echo "$skip_reason" | md
    return 0
  fi
  if [ -n "$targets" ]; then
    # shellcheck disable=SC2086 # a list of target names
    sub build_tests 240 cmake --build "$GS_BUILD" -j "$TSR_JOBS" --target $targets
  else # the programs not found by name: everything
    sub build_tests 240 cmake --build "$GS_BUILD" -j "$TSR_JOBS"
  fi
  # Local time without a zone: ctest misreads "+0000" or "UTC" suffixes (CMake 3.25).
  stop=$(date -d "@$((GS_STEP_END - 8))" '+%H:%M:%S')
  t=$((GS_STEP_END - $(now) - 8))
  [ "$t" -gt 300 ] && t=300
  [ "$t" -lt 5 ] && t=5
  local envs=()
  [ -n "${TSR_GPU_SESSION_TESTS_ENV:-}" ] && read -r -a envs <<<"$TSR_GPU_SESSION_TESTS_ENV"
  # shellcheck disable=SC2016 # expanded by that sh
  sub ctest 900 env "${envs[@]}" sh -c 'cd "$0" && exec "$@"' "$GS_BUILD" \
    ctest --output-on-failure -j "$jobs" --timeout "$t" --stop-time "$stop" "${sel[@]}"
  log=$SUB_LOG
  [ "$SUB_RC" -eq 125 ] && echo "- ctest not run: the step's budget went to building the test programs" | md
  {
    echo
    grep -E 'tests passed|No tests were found' "$log" | tail -1 | sed 's/^/- /'
    awk '/^The following tests FAILED/ { on = 1; next } on && /^[ \t]+[0-9]+ - / {
           sub(/^[ \t]+[0-9]+ - /, ""); print "- failed: " $0; next } on { on = 0 }' "$log"
    # Selected tests that never started (the stop time): in the list, not in the log.
    pyrun "$GS_PY" -c '
import json, re, sys
ran = set(re.findall(r"Test +#\d+: (\S+)", open(sys.argv[2], errors="replace").read()))
for t in json.load(open(sys.argv[1])).get("tests", []):
    if t["name"] not in ran:
        print("- not run (the budget): " + t["name"])' "$list" "$log" 2>/dev/null
  } | md
  if grep -q '^- not run' "$GS_WORK/md.$GS_STEP_IDX"; then budget_hit=1; fi
  grep '^- failed: \|^- not run' "$GS_WORK/md.$GS_STEP_IDX" | while read -r l; do
    pyrun "$GS_PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import session as s
s.tsv_row(sys.argv[2], step="tests", case=sys.argv[3].split(": ", 1)[1], status=sys.argv[3][2:].split(":")[0])' \
      "$root/scripts/gpu_session" "$GS_OUT/results.tsv" "$l"
  done
}

# ------------------------------------------------------------------------------ main -------
if [ "${1:-}" = __step ]; then # a step, started by the session below
  GS_STEP_IDX=$2
  export TSR_GS_TAG=$GS_TAG # every process of the step carries it: sweep finds them
  exec 3>&1 >>"$GS_OUT/$2-$3.log" 2>&1
  GS_CONSOLE_FD=3
  echo "== step $2 $3: budget $((GS_STEP_END - $(now))) s, until $(date -d "@$GS_STEP_END" '+%H:%M:%S')"
  "step_$3"
  finish_step
  echo "== step $2 $3: $(sed 's/\t/: /' "$GS_WORK/state/result.$2")"
  compose
  exit 0
fi

device=cuda out=${OUT:-$PWD/gpu-session-out} budget=480 build=${TSR_GPU_SESSION_BUILD:-}
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    prepare) [ $# -eq 1 ] || { echo "prepare takes no options" >&2; exit 2; }; prepare; exit $? ;;
    --device) device=${2:-}; shift 2 ;;
    --device=*) device=${1#*=}; shift ;;
    --out) out=${2:-}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --budget) budget=${2:-}; shift 2 ;;
    --budget=*) budget=${1#*=}; shift ;;
    --build) build=${2:-}; shift 2 ;;
    --build=*) build=${1#*=}; shift ;;
    *) echo "gpu_session.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $device in cuda | cpu) ;; *) echo "gpu_session.sh: --device cuda or cpu, not '$device'" >&2; exit 2 ;; esac
case $budget in '' | *[!0-9]*) echo "gpu_session.sh: --budget takes seconds, not '$budget'" >&2; exit 2 ;; esac
[ -n "$out" ] || { echo "gpu_session.sh: --out needs a folder" >&2; exit 2; }
[[ $out == /* ]] || out=$PWD/$out
[ -n "$build" ] || build=$root/build/gpu-session$([ "$device" = cpu ] && echo -cpu)
[[ $build == /* ]] || build=$PWD/$build
cd "$root" || exit 1

export GS_T0 GS_DEVICE=$device GS_OUT=$out GS_BUILD=$build GS_CLI=$build/tessera-gemm
GS_T0=$(now)
export GS_PATH0=$PATH GS_LDPATH0=${LD_LIBRARY_PATH:-}
export GS_TAG="gs$$.$GS_T0" GS_WORK=${TSR_GPU_SESSION_WORK:-}
[ -n "$GS_WORK" ] || GS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsr_gpu_session.XXXXXX")
mkdir -p "$out" "$GS_WORK/state" "$GS_WORK/runs" "$GS_WORK/json" || exit 1
rm -f "$out"/summary.md "$out"/results.tsv "$out"/[1-6]-*.log "$GS_WORK"/md.* "$GS_WORK"/state/*
if [ "$device" = cuda ]; then
  export GS_VARIANT=cuda GS_DEV=cuda GS_SIZES="8192 16384" GS_RANKS_N=8192 GS_REPEAT=3
else
  export GS_VARIANT=cpu GS_DEV=cpu GS_SIZES="128 256" GS_RANKS_N=256 GS_REPEAT=2
fi
GS_SIZES=${TSR_GPU_SESSION_SIZES:-$GS_SIZES} GS_RANKS_N=${TSR_GPU_SESSION_RANKS_N:-$GS_RANKS_N}
# 20 s kept: a step overrunning its budget is killed 10 (+5) s after it, and the summary is
# finished before the call's timeout_s = --budget.
deadline=$((GS_T0 + budget - 20))

# Python: one with NumPy (python3 on PATH, else Debian's); PyTorch for the anchor.
GS_PY=${TSR_GPU_SESSION_PYTHON:-}
if [ -z "$GS_PY" ]; then
  for c in python3 /usr/bin/python3; do
    command -v "$c" >/dev/null 2>&1 && "$c" -c 'import numpy' 2>/dev/null && { GS_PY=$(command -v "$c"); break; }
  done
  [ -n "$GS_PY" ] || GS_PY=$(command -v python3 || echo python3)
fi
GS_TORCH=""
if [ "$device" = cuda ]; then
  for c in "$GS_PY" python3 /usr/bin/python3; do
    command -v "$c" >/dev/null 2>&1 &&
      "$c" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2>/dev/null &&
      { GS_TORCH=$(command -v "$c"); break; }
  done
fi
export GS_PY GS_TORCH
use_deps

# The machine, once (each probe at most 10 s).
probe() { timeout 10 "$@" 2>/dev/null; }
pkgver() { probe "$1" -c 'import importlib.metadata as m, sys
try: print(m.version(sys.argv[1]))
except Exception: print("absent")' "$2"; }
{
  echo "# GPU session $(date -u '+%Y-%m-%d %H:%M:%S UTC')$([ "$device" = cpu ] && echo ': DRY RUN on the CPU')"
  echo
  echo "- commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] && echo ' (tracked files changed)'), host $(uname -n), $(nproc) CPUs: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "- device $device, budget $budget s, build $build, results $out, work files $GS_WORK"
  echo "- GPU: $(probe nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader | head -2 | tr '\n' ' ' || true)$(command -v nvidia-smi >/dev/null || echo 'none (no nvidia-smi)')"
  echo "- nvcc: $(probe nvcc --version | tail -2 | head -1 || true); cmake $(probe cmake --version | head -1 | awk '{print $3}'); mpirun: $(probe mpirun --version 2>&1 | head -1 | grep . || echo 'absent (carry .gpu_debs)')"
  echo "- MPI CUDA support: $(probe ompi_info --parsable --all | grep -h 'mpi_built_with_cuda_support:value' || echo 'not reported')"
  echo "- cmocka: $(pkg-config --modversion cmocka 2>/dev/null || echo 'absent (no tests)'); carried packages: $([ -d "$debs" ] && echo "$(find "$debs" -name '*.deb' | wc -l) from .gpu_debs" || echo none)"
  echo "- python $GS_PY: NumPy $(pkgver "$GS_PY" numpy); PyTorch: ${GS_TORCH:+$GS_TORCH }$([ -n "$GS_TORCH" ] && pkgver "$GS_TORCH" torch || echo 'absent (or not looked for: cpu)')"
} >"$GS_WORK/header.md"
budgets=""
declare -A step_budget
for s in "${steps[@]}"; do
  v=TSR_GPU_SESSION_BUDGET_${s^^}
  if [ -n "${!v:-}" ]; then
    step_budget[$s]=${!v}
  else
    step_budget[$s]=$((base_budget[$s] * budget / 480))
  fi
  [ "$s" = tests ] || budgets+="$s ${step_budget[$s]} s, "
done
echo "- step budgets: ${budgets}tests: what is left" >>"$GS_WORK/header.md"
compose
cat "$GS_WORK/header.md"

current=0
child=""
stopped() {
  trap - TERM INT HUP
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  [ "$current" -gt 0 ] && set_step "$current" "${steps[$((current - 1))]}" "stopped by SIG$1" \
    "$(($(now) - step_t0)) s" "-" "the session was stopped"
  sweep >/dev/null
  compose
  exit "$2"
}
trap 'stopped TERM 143' TERM
trap 'stopped INT 130' INT
trap 'stopped HUP 129' HUP

session_failed=0
for i in 1 2 3 4 5 6; do
  s=${steps[$((i - 1))]}
  current=$i
  left=$((deadline - $(now)))
  b=${step_budget[$s]}
  { [ "$b" -eq 0 ] || [ "$b" -gt "$left" ]; } && b=$left # 0: what is left (tests)
  if [ "$b" -lt 3 ]; then
    set_step "$i" "$s" "not run" "0 s" "$b s" "the session's budget is spent"
    say "step $i/6 $s: not run (the session's budget is spent)"
    session_failed=1
    compose
    continue
  fi
  step_t0=$(now)
  set_step "$i" "$s" running "-" "$b s" "started at +$((step_t0 - GS_T0)) s"
  compose
  say "step $i/6 $s: budget $b s"
  export GS_STEP_END=$((step_t0 + b))
  rm -f "$GS_WORK/state/result.$i"
  timeout -k 5 $((b + 10)) bash "$self" __step "$i" "$s" &
  child=$!
  wait "$child"
  rc=$?
  child=""
  el=$(($(now) - step_t0))
  if [ -f "$GS_WORK/state/result.$i" ]; then
    IFS=$'\t' read -r result note <"$GS_WORK/state/result.$i"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    result="timed out" note="killed $((el - b)) s after its budget"
  else
    result="FAILED (exit $rc)" note="the step ended without its result"
  fi
  sweep >>"$out/$i-$s.log" 2>&1
  set_step "$i" "$s" "$result" "$el s" "$b s" "$note"
  case $result in passed | skipped*) ;; *) session_failed=1 ;; esac
  compose
  say "step $i/6 $s: $result in $el s (budget $b s): $note"
done
current=0
echo "Finished at +$(($(now) - GS_T0)) s of the $budget s budget." >"$GS_WORK/footer.md"
compose
echo
cat "$out/summary.md"
exit "$session_failed"
