#!/usr/bin/env bash
# The runbook a session runs first when it is lent a GPU (issue 29): every phase fits one
# device call (10 minutes), several phases may share a call, and the whole invocation stops
# itself before TSR_GPU_SESSION_BUDGET seconds (default 540) so that ctest still prints its
# summary and the logs are packed before the call's limit.
#
#   scripts/gpu_session.sh prepare
#       HERE (a machine with apt and network, no GPU needed): downloads the Debian packages
#       the device image lacks (cmocka, Open MPI and their libraries) into .gpu_debs/
#       (git-ignored). The image has nvcc, CMake, ninja, python3 and compute-sanitizer.
#
#   scripts/gpu_session.sh PHASE...          (on the GPU machine; carry .gpu_debs)
#     env        the machine: nvidia-smi -q, tool versions (nvcc, compute-sanitizer, nsys,
#                ncu, cmake), Open MPI's CUDA support (ompi_info --parsable --all | grep
#                cuda), lscpu, and the binding mpirun gives 1, 2 and 4 ranks (--report-bindings
#                and each rank's allowed CPUs, which set the job's threads per rank)
#     build      configure (Release, the GPU's own sm_XY, tsr_variant_args cuda) and build
#                build/gpu-session. Any later phase configures and builds what it needs
#                first when the tree is missing (a fresh machine), so `build` is optional.
#     test       test-gpu, test-mpi and test-cpu, as far as the budget goes
#     test-gpu   ctest -L cuda (not gpu_large, not mpi) -j4; gpu_large alone; the same cuda
#                tests with TSR_GPU_SYNC_DEBUG=1; the examples with TSR_DEVICE=cuda
#     test-mpi   ctest -L mpi (dist_gemm_cuda_* included) -j4
#     test-cpu   every other test (cpu, blas, install, examples on the default device) -j8
#     job        tessera-gemm --device cuda on 1 rank, f32 and f64, n = 8192 and 16384, and
#                mpirun -np 2 and 4 at n = 8192 (--repeat 3 --warmup 1 --json), beside the
#                cuBLAS anchor (bench_gpu at 8192 and 16384) in the same call; prints a table
#     profile    nsys profile --stats=true of the 1-rank f32 8192 job (nsys on PATH or under
#                /opt/nvidia); without a working nsys, ncu of three of its kernels
#     sanitize   sanitize-memcheck, then sanitize-race
#     sanitize-memcheck  compute-sanitizer memcheck of every GPU test program (the core
#                suite on cuda, kernel_helpers, gpu_cross; test_dist_gemm under mpirun -np 2),
#                with TSR_GPU_ALLOC_CACHE=0: exact-size cudaMalloc per array, so overruns are
#                seen. gpu_large (40 GiB) and gpu_fault (emulator only) are left out.
#     sanitize-race      racecheck and synccheck of the GEMM test programs (gpu_cross,
#                core_matmul), also with TSR_GPU_ALLOC_CACHE=0
#     bench      bench_gpu's full sweep (native vs cuBLAS 1024..8192, bandwidth, transfers,
#                per-call overhead, matmul vs the CPU), JSON kept
#     all        every phase in order (does not fit one call: for a machine of your own)
#
# Results. Each invocation writes gpu_session_out/run-<UTC time>/<phase>/: one log per step,
# steps.tsv and junit_steps.xml (every step as a JUnit test case: failed, timed out, skipped
# or not run for lack of time), and per ctest group <group>/junit.xml (ctest --output-junit),
# the ctest log (--output-on-failure), LastTest.log and tests/<test>.log (one per test).
# After every step and in an EXIT trap (also on SIGTERM/SIGINT/SIGHUP) the run folder is
# packed into $OUT/gpu_session_<phases>.tar.gz with $OUT/gpu_session_summary.txt beside it
# (or into gpu_session_out/ when OUT is unset); with $OUT set nothing else is written there
# (the device tool returns at most 8 files), except the nsys report when under 15 MiB.
# Exit status: 0 when every step passed or was skipped (77), 1 otherwise, 2 on bad usage.
# Environment: OUT (where the archive goes), TSR_GPU_SESSION_BUDGET (seconds, default 540),
# TSR_GPU_SESSION_BUILD (build tree, default build/gpu-session; another CUDA tree for a dry
# run), TSR_JOBS (build parallelism, default nproc).
#
# Calls for a 30-minute device budget, most important first (each call costs its machine's
# start, 1-2 min, plus up to 9 min; a machine given back, 30 s after a call, takes its build
# with it, so each call configures and builds again: 3.5 min on a shared 2-core machine, the
# build step's time is in the summary). test-cpu is what CI already runs: only with time left.
#   run(command="scripts/gpu_session.sh env job", carry=[".gpu_debs"], timeout_s=600)
#   run(command="scripts/gpu_session.sh test-gpu test-mpi", carry=[".gpu_debs"], timeout_s=600)
#   run(command="scripts/gpu_session.sh sanitize profile", carry=[".gpu_debs"], timeout_s=600)
# With a shorter timeout_s, set TSR_GPU_SESSION_BUDGET to about timeout_s - 60.
# Nothing here marks a figure as measured: the outputs are raw material for the closing note.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/common.sh disable=SC1091
source "$root/scripts/common.sh" # tsr_variant_args, TSR_JOBS, OMPI_ALLOW_RUN_AS_ROOT*
set +e                           # common.sh sets -e: a failed step must not end the run
cd "$root" || exit 1

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
phases_known="prepare env build test test-gpu test-mpi test-cpu job profile sanitize sanitize-memcheck sanitize-race bench all"
[ $# -gt 0 ] || { usage; exit 2; }
for p in "$@"; do
  case " $phases_known " in
    *" $p "*) ;;
    *) echo "unknown phase '$p' (one of: $phases_known)" >&2; exit 2 ;;
  esac
done

debs=$root/.gpu_debs
deproot=/tmp/tsr_gpu_deps

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
if [ "$*" = prepare ]; then
  prepare
  exit $?
fi
[[ " $* " != *" prepare "* ]] || { echo "prepare runs alone (here, not on the GPU machine)" >&2; exit 2; }

# ------------------------------------------------------------------------------ the run ----
budget=${TSR_GPU_SESSION_BUDGET:-540}
deadline=$(($(date +%s) + budget))
reserve=20 # seconds kept at the end for packing
work=$root/gpu_session_out
run=$work/run-$(date -u +%Y%m%dT%H%M%SZ)
dest=${OUT:-$work}
build=${TSR_GPU_SESSION_BUILD:-$root/build/gpu-session} # another tree: for dry runs
[[ $build == /* ]] || build=$root/$build
jobs=$TSR_JOBS
phases_run="$*"
label=$(echo "$*" | tr ' ' '-' | tr -cd 'A-Za-z0-9_-')
archive=gpu_session_${label}.tar.gz
mkdir -p "$run" "$dest" || exit 1
phase=setup
phase_dir=$run/setup
mkdir -p "$phase_dir"
# Runs a command in a folder: step NAME CAP "${indir[@]}" DIR CMD...
# shellcheck disable=SC2016 # expanded by that sh
indir=(sh -c 'cd "$0" && exec "$@"')

left() { echo $((deadline - $(date +%s))); }
note() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$run/summary.txt"; }

# record NAME RC SECONDS [WHY]: one line in the phase's steps.tsv and the summary.
record() {
  local what
  case $2 in
    0) what=passed ;;
    77) what=skipped ;;
    124 | 137) what="TIMED OUT" ;;
    125) what="not run" ;;
    *) what="FAILED (exit $2)" ;;
  esac
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$phase_dir/steps.tsv"
  note "$phase/$1: $what ($3 s)${4:+: $4}"
}

# step NAME CAP CMD...: CMD with its output in <phase>/NAME.log, killed after CAP seconds or
# at the invocation's deadline less the packing reserve, whichever is first; recorded and
# packed. Returns CMD's status (124/137: timed out; 125: not run, no time left).
step() {
  local name=$1 cap=$2 lim t0 rc
  shift 2
  lim=$(($(left) - reserve))
  [ "$lim" -gt "$cap" ] && lim=$cap
  if [ "$lim" -lt 5 ]; then
    record "$name" 125 0 "the budget (TSR_GPU_SESSION_BUDGET=$budget s) is spent"
    return 125
  fi
  t0=$(date +%s)
  # In the background, so that a signal to this script runs its trap at once (bash waits
  # for a foreground child first); timeout leads its own process group, which the trap ends.
  timeout -k 10 "$lim" "$@" >"$phase_dir/$name.log" 2>&1 &
  child=$! child_name=$name child_t0=$t0
  wait "$child"
  rc=$?
  child=""
  record "$name" "$rc" $(($(date +%s) - t0))
  pack
  return $rc
}

xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' | tr -d '\000-\010\013\014\016-\037'; }

# The steps of a phase folder as JUnit test cases (junit_steps.xml).
junit_steps() {
  local dir=$1 tsv=$1/steps.tsv n f s name rc secs why
  [ -f "$tsv" ] || return 0
  n=$(wc -l <"$tsv")
  f=$(awk -F'\t' '$2 != 0 && $2 != 77 && $2 != 125' "$tsv" | wc -l)
  s=$((n - f - $(awk -F'\t' '$2 == 0' "$tsv" | wc -l)))
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    printf '<testsuite name="gpu_session.%s" tests="%s" failures="%s" skipped="%s">\n' \
      "$(basename "$dir")" "$n" "$f" "$s"
    while IFS=$'\t' read -r name rc secs why; do
      printf '  <testcase classname="gpu_session.%s" name="%s" time="%s">\n' \
        "$(basename "$dir")" "$name" "$secs"
      case $rc in
        0) ;;
        77 | 125) printf '    <skipped message="%s"/>\n' "$(printf '%s' "${why:-exit 77}" | xml_escape)" ;;
        *)
          printf '    <failure message="exit %s%s">' "$rc" "$(printf '%s' "${why:+: $why}" | xml_escape)"
          [ -f "$dir/$name.log" ] && tail -n 60 "$dir/$name.log" | xml_escape
          printf '</failure>\n'
          ;;
      esac
      echo '  </testcase>'
    done <"$tsv"
    echo '</testsuite>'
  } >"$dir/junit_steps.xml"
}

# Packs the run folder into $dest (large profiler files stay out: see profile).
pack() {
  local d
  for d in "$run"/*/; do junit_steps "${d%/}"; done
  if tar -C "$work" --exclude='*.nsys-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
    --exclude='*.ncu-rep' -czf "$dest/$archive.part" "$(basename "$run")" 2>/dev/null; then
    mv -f "$dest/$archive.part" "$dest/$archive"
  fi
  cp -f "$run/summary.txt" "$dest/gpu_session_summary.txt" 2>/dev/null
  return 0
}

finish() {
  local rc=$? failed
  trap - EXIT
  failed=$(cat "$run"/*/steps.tsv 2>/dev/null | awk -F'\t' '$2 != 0 && $2 != 77' | wc -l)
  note "end of '$phases_run': $failed step(s) failed or not run; $(($(left) + 0)) s of the budget left"
  pack
  echo "== packed: $dest/$archive ($(du -h "$dest/$archive" 2>/dev/null | cut -f1)); logs in $run"
  [ "$failed" -eq 0 ] && [ "$rc" -eq 0 ] && exit 0
  exit 1
}
# A signal ends the running step (its process group: timeout's) and packs what there is.
child=""
stopped() {
  note "stopped by SIG$1"
  if [ -n "$child" ]; then
    kill -TERM -- "-$child" 2>/dev/null
    record "$child_name" "$2" $(($(date +%s) - child_t0)) "stopped by SIG$1 (its process group ended)"
  fi
  exit "$2"
}
trap finish EXIT
trap 'stopped TERM 143' TERM
trap 'stopped INT 130' INT
trap 'stopped HUP 129' HUP

# ------------------------------------------------------------------------------ helpers ----
# Unpacks the carried packages into $deproot (never into /) and points the tools at them.
use_deps() {
  [ -d "$debs" ] || { note "deps: no .gpu_debs carried: using what the image has"; return 0; }
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

# The first of the names that is an executable (on PATH or a path; globs allowed).
find_tool() {
  local c
  for c in "$@"; do
    if [[ $c == */* ]]; then
      # shellcheck disable=SC2086 # a glob, expanded on purpose
      for f in $c; do [ -x "$f" ] && { echo "$f"; return 0; }; done
    elif command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

# Fails the phase (recorded) when there is no NVIDIA GPU.
need_gpu() {
  if nvidia-smi -L >"$phase_dir/gpus.txt" 2>&1 && grep -q '^GPU ' "$phase_dir/gpus.txt"; then
    return 0
  fi
  record need_gpu 1 0 "no NVIDIA GPU here: nvidia-smi -L says '$(head -c 160 "$phase_dir/gpus.txt" | tr '\n' ' ')'"
  return 1
}

# ensure_build [TARGET...]: configures build/gpu-session when it is not, then builds the
# targets (all when none).
ensure_build() {
  if [ ! -f "$build/CMakeCache.txt" ]; then
    local arch args gen=()
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
    case $arch in '' | *[!0-9]*) arch=90 ;; esac
    read -r -a args <<<"$(tsr_variant_args cuda)"
    command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
    step configure 240 cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      "${args[@]}" -DCMAKE_CUDA_ARCHITECTURES="$arch" || return 1
  fi
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  step "build${1:+_$1}" 540 cmake --build "$build" -j "$jobs" "${targets[@]}"
}

# ctest_group NAME [VAR=VALUE...] -- CTEST_ARGS...: one ctest run in <phase>/NAME/ with its
# JUnit XML, log (--output-on-failure), LastTest.log and one log per test. Tests stop at
# the invocation's deadline (--stop-time: ctest shortens each test's timeout to it and still
# writes its summary); no test may run longer than 300 s.
ctest_group() {
  local name=$1 envs=(TSR_GPU_SESSION=1) dir stop junit=() rc log
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  dir=$phase_dir/$name
  mkdir -p "$dir/tests"
  # Local time without a zone: ctest misreads "+0000" or "UTC" suffixes (CMake 3.25).
  stop=$(date -d "@$((deadline - reserve - 30))" '+%H:%M:%S')
  [[ $(ctest --help 2>/dev/null) == *--output-junit* ]] && junit=(--output-junit "$dir/junit.xml")
  rm -f "$build"/Testing/Temporary/LastTest*.log
  step "ctest_$name" 600 env "${envs[@]}" "${indir[@]}" "$build" ctest --output-on-failure \
    "${junit[@]}" --stop-time "$stop" --timeout 300 "$@"
  rc=$?
  log=$phase_dir/ctest_$name.log
  mv "$log" "$dir/ctest.log" 2>/dev/null && ln -sf "$name/ctest.log" "$log"
  cp "$build"/Testing/Temporary/LastTest*.log "$dir/" 2>/dev/null
  awk -v d="$dir/tests" 'FNR == 1 { if (f) close(f); f = "" }
    /^[0-9]+\/[0-9]+ Testing: / { if (f) close(f); f = d "/" $3 ".log" } f { print > f }' \
    "$dir"/LastTest.log "$dir"/LastTest_*.log 2>/dev/null
  note "  $(grep -E 'tests passed|No tests were found' "$dir/ctest.log" | tail -1)"
  # Tests the stop time left unstarted appear nowhere else: listed here.
  "${indir[@]}" "$build" ctest -N "$@" 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p' |
    while read -r t; do [ -f "$dir/tests/$t.log" ] || echo "$t"; done >"$dir/not_run.txt"
  [ -s "$dir/not_run.txt" ] &&
    note "  not run (stop time): $(wc -l <"$dir/not_run.txt") test(s): $(tr '\n' ' ' <"$dir/not_run.txt")"
  awk '/^The following tests/ { what = /FAILED/ ? "failed" : "skipped" }
       what && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+/, ""); print "  " what ": " $0 }' \
    "$dir/ctest.log" 2>/dev/null | tee -a "$run/summary.txt"
  pack
  return $rc
}

# ------------------------------------------------------------------------------ phases -----
phase_env() {
  step nvidia_smi_q 60 nvidia-smi -q
  step nvidia_smi 60 sh -c 'nvidia-smi && nvidia-smi topo -m'
  # shellcheck disable=SC2016
  step tools 60 sh -c 'for t in nvcc compute-sanitizer nsys ncu cmake ctest ninja gcc mpicc mpirun \
    ompi_info python3; do printf "== %s: " "$t"; command -v "$t" || { echo "not on PATH"; continue; }; \
    "$t" --version 2>&1 | head -5; done; ls -d /opt/nvidia/nsight-* /usr/local/cuda*/bin/nsys 2>/dev/null; true'
  # mpi_built_with_cuda_support: whether SUMMA can hand device pointers to MPI.
  # shellcheck disable=SC2016
  step ompi_cuda 60 sh -c 'ompi_info --parsable --all >"$0/ompi_info_all.txt" || exit 1; \
    grep -i cuda "$0/ompi_info_all.txt" || echo "(no cuda line: built without CUDA support)"' "$phase_dir"
  step lscpu 30 lscpu
  # shellcheck disable=SC2016
  step host 30 sh -c 'uname -a; cat /etc/os-release; echo "nproc: $(nproc)"; free -g; ulimit -a; df -h .'
  local np gpu
  for np in 1 2 4; do
    # shellcheck disable=SC2016
    step "binding_np$np" 60 mpirun --report-bindings --oversubscribe -np "$np" sh -c \
      'echo "rank $OMPI_COMM_WORLD_RANK: $(nproc) CPUs allowed ($(grep Cpus_allowed_list /proc/self/status | cut -f2))"'
  done
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader \
    2>/dev/null | head -2 | tr '\n' ' ')
  note "gpu: ${gpu:-none (nvidia-smi absent or failing)}"
  note "cuda-aware mpi: $(grep -h 'mpi_built_with_cuda_support:value' "$phase_dir/ompi_cuda.log" 2>/dev/null ||
    echo 'not reported')"
  note "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs"
  for np in 1 2 4; do
    note "binding np$np: $(grep -h 'CPUs allowed' "$phase_dir/binding_np$np.log" 2>/dev/null | sort |
      sed 's/ (.*//' | tr '\n' ';')"
  done
}

phase_build() { ensure_build; }

phase_test_gpu() {
  need_gpu || return 1
  ensure_build || return 1
  ctest_group gpu -- -j4 -L cuda -LE 'gpu_large|mpi'
  ctest_group large -- -L gpu_large
  ctest_group sync_debug TSR_GPU_SYNC_DEBUG=1 -- -j4 -L cuda -LE 'gpu_large|mpi'
  ctest_group examples TSR_DEVICE=cuda -- -L example
}

phase_test_mpi() {
  ensure_build || return 1
  ctest_group mpi -- -j4 -L mpi
}

phase_test_cpu() {
  ensure_build || return 1
  ctest_group cpu -- -j8 -LE 'cuda|mpi|gpu_large|gpu-emu|hip'
}

# The job against cuBLAS on the same GPU in the same call.
phase_job() {
  need_gpu || return 1
  ensure_build tessera-gemm bench_gpu || return 1
  local cli=$build/tessera-gemm dt n np
  step anchor_bench_gpu 240 "${indir[@]}" "$phase_dir" "$build/bench/bench_gpu" --sizes 8192,16384 \
    --reps 5 --no-skinny --bw-log2 26 --json "$phase_dir/bench_gpu_anchor.json"
  for n in 8192 16384; do
    for dt in f32 f64; do
      step "job_np1_${dt}_$n" 200 mpirun --report-bindings -np 1 "$cli" --device cuda -m "$n" \
        -n "$n" -k "$n" --dtype "$dt" --repeat 3 --warmup 1 --json "$phase_dir/job_np1_${dt}_$n.json"
    done
  done
  for np in 2 4; do
    for dt in f32 f64; do
      step "job_np${np}_${dt}_8192" 150 mpirun --report-bindings --oversubscribe -np "$np" "$cli" \
        --device cuda -m 8192 -n 8192 -k 8192 --dtype "$dt" --repeat 3 --warmup 1 \
        --json "$phase_dir/job_np${np}_${dt}_8192.json"
    done
  done
  step job_table 60 python3 -c '
import glob, json, os, sys
d = sys.argv[1]
anchor = {}
try:
    for r in json.load(open(os.path.join(d, "bench_gpu_anchor.json")))["results"]:
        for name, dt in (("sgemm cuBLAS", "f32"), ("dgemm cuBLAS", "f64")):
            if r["name"] == name:
                anchor[(dt, r["size"])] = r["rate"]
except Exception as e:
    print("(no cuBLAS anchor: %s)" % e)
print("| ranks | dtype | n | Tessera GFLOP/s | cuBLAS GFLOP/s | ratio | compute s | read s | verify |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for p in sorted(glob.glob(os.path.join(d, "job_np*.json"))):
    try:
        j = json.load(open(p))
    except Exception as e:
        print("| %s: unreadable (%s) |" % (os.path.basename(p), e))
        continue
    a = anchor.get((j["dtype"], j["n"]))
    s = j["seconds"]
    print("| %d | %s | %d | %.0f | %s | %s | %.3f | %.2f | %s |" % (j["ranks"], j["dtype"], j["n"],
          j["gflops"], "%.0f" % a if a else "-", "%.2f" % (j["gflops"] / a) if a else "-",
          s["compute"], s["read"], j["verify"]["verdict"]))
' "$phase_dir"
  tee -a "$run/summary.txt" <"$phase_dir/job_table.log"
}

phase_profile() {
  need_gpu || return 1
  ensure_build tessera-gemm || return 1
  local args=(--device cuda -m 8192 -n 8192 -k 8192 --dtype f32 --repeat 2 --warmup 1) nsys ncu rep
  nsys=$(find_tool nsys '/opt/nvidia/nsight-systems*/bin/nsys' '/usr/local/cuda*/bin/nsys' \
    '/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys')
  if [ -n "$nsys" ]; then
    rep=$phase_dir/job_np1_f32_8192
    if step nsys_job_np1_f32_8192 300 "$nsys" profile --stats=true --trace=cuda,nvtx,osrt \
      --force-overwrite=true -o "$rep" mpirun -np 1 "$build/tessera-gemm" "${args[@]}" &&
      [ -f "$rep.nsys-rep" ]; then
      if [ "$(stat -c %s "$rep.nsys-rep")" -lt $((15 << 20)) ]; then
        cp "$rep.nsys-rep" "$dest/"
      else
        note "profile: $rep.nsys-rep is over 15 MiB: kept on the machine only"
      fi
      return 0
    fi
  else
    record nsys 77 0 "no nsys on PATH, under /opt/nvidia or /usr/local/cuda*"
  fi
  ncu=$(find_tool ncu '/opt/nvidia/nsight-compute/*/ncu' '/usr/local/cuda*/bin/ncu') ||
    { record ncu 1 0 "no nsys that works and no ncu: nothing profiled"; return 1; }
  step ncu_job_np1_f32_8192 300 mpirun -np 1 "$ncu" --clock-control none --launch-skip 2 \
    --launch-count 3 --section SpeedOfLight --section LaunchStats --section Occupancy \
    "$build/tessera-gemm" "${args[@]}"
}

# The GPU test programs of the build (the core suite runs each on TSR_TEST_DEVICE=cuda).
gpu_programs() {
  local p
  for p in core_status core_device core_creation core_views core_transfer core_binary core_unary \
    core_reduce core_random core_bad_input core_error_names kernel_helpers core_matmul gpu_cross; do
    [ -x "$build/tests/$p" ] && echo "$p"
  done
}

# Sets cs to compute-sanitizer's path, or records its absence.
find_sanitizer() {
  cs=$(find_tool compute-sanitizer '/usr/local/cuda*/bin/compute-sanitizer' \
    '/opt/nvidia/*/compute-sanitizer/compute-sanitizer') && return 0
  record compute_sanitizer 1 0 "compute-sanitizer not found"
  return 1
}

phase_sanitize_memcheck() {
  need_gpu || return 1
  ensure_build || return 1
  local cs p
  find_sanitizer || return 1
  for p in $(gpu_programs); do
    step "memcheck_$p" 180 "${indir[@]}" "$build/tests" env TSR_TEST_DEVICE=cuda TSR_GPU_ALLOC_CACHE=0 \
      "$cs" --tool memcheck --error-exitcode 99 "./$p"
  done
  if [ -x "$build/tests/test_dist_gemm" ]; then
    step memcheck_dist_gemm_np2 240 env TSR_TEST_DEVICE=cuda TSR_GPU_ALLOC_CACHE=0 OMP_NUM_THREADS=1 \
      mpirun --oversubscribe -np 2 "$cs" --tool memcheck --error-exitcode 99 "$build/tests/test_dist_gemm"
  fi
}

phase_sanitize_race() {
  need_gpu || return 1
  ensure_build || return 1
  local cs p tool
  find_sanitizer || return 1
  for tool in racecheck synccheck; do
    for p in core_matmul gpu_cross; do
      [ -x "$build/tests/$p" ] || continue
      step "${tool}_$p" 240 "${indir[@]}" "$build/tests" env TSR_TEST_DEVICE=cuda TSR_GPU_ALLOC_CACHE=0 \
        "$cs" --tool "$tool" --error-exitcode 99 "./$p"
    done
  done
}

phase_bench() {
  need_gpu || return 1
  ensure_build bench_gpu || return 1
  step bench_gpu 480 "${indir[@]}" "$phase_dir" "$build/bench/bench_gpu" --sizes 1024,2048,4096,8192 \
    --reps 7 --json "$phase_dir/bench_gpu.json"
}

# ------------------------------------------------------------------------------ main -------
expanded=()
for p in "$@"; do
  case $p in
    all) expanded+=(env build test-gpu test-mpi test-cpu job profile sanitize-memcheck sanitize-race bench) ;;
    test) expanded+=(test-gpu test-mpi test-cpu) ;;
    sanitize) expanded+=(sanitize-memcheck sanitize-race) ;;
    *) expanded+=("$p") ;;
  esac
done
set -- "${expanded[@]}"
phases_run="$*"
note "gpu_session: phases $*; budget $budget s; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); host $(uname -n)"
use_deps
for phase in "$@"; do
  phase_dir=$run/$phase
  mkdir -p "$phase_dir"
  note "== $phase ($(left) s left)"
  "phase_${phase//-/_}"
  pack
done
