# SPDX-License-Identifier: BSD-3-Clause
# Hook of scripts/test.sh (sourced in a subshell; uses $BUILD and $TSR_ROOT): the dry run of
# the one-call GPU session (scripts/gpu_session.sh --device cpu, issue 48) on the cpu
# variant's tree ($BUILD/cpu, built by test.sh; when it has no tessera-gemm, the script builds
# its own small tree, $BUILD/gpu-session-cpu). Two runs, about a minute together:
#  1. in full: every step's line is in summary.md (anchor "skipped: no GPU", the others
#     passed), every real-input product passed its check against the float64 reference, and
#     results.tsv has the job's 12 runs;
#  2. with step 2's budget cut to 3 s on n = 8192 (TSR_GPU_SESSION_BUDGET_JOB,
#     TSR_GPU_SESSION_SIZES) and TSR_GEMM=bogus in the tests' environment: step 2 is reported
#     "timed out" with a run killed by the step's budget, steps 3-6 still ran (ranks and npy
#     passed), and step 6 lists core_matmul_cpu among the failed tests.
gs_build=$BUILD/cpu
[ -x "$gs_build/tessera-gemm" ] && [ -f "$gs_build/tests/CTestTestfile.cmake" ] ||
  gs_build=$BUILD/gpu-session-cpu
gs_tmp=$(mktemp -d "${TMPDIR:-/tmp}/tsr_gs_hook.XXXXXX") || return 1
gs_fail=()

# gs_expect FILE REGEX WHAT: records a failure when no line of FILE matches REGEX.
gs_expect() {
  grep -Eq -- "$2" "$1" 2>/dev/null || gs_fail+=("$3")
}
gs_step() { # FILE IDX NAME RESULT-REGEX: the step's line in the summary's table
  gs_expect "$1" "^\| $2 \| $3 \| ($4) \| [0-9]+ s \| [0-9]+ s \|" "$(basename "$(dirname "$1")"): step $2 $3 is not '$4'"
}

echo "gpu_session: dry run 1 (all steps) on $gs_build"
gs_rc=0 # test.sh runs with set -e: the status is taken, not fatal
TSR_GPU_SESSION_WORK=$gs_tmp/work1 "$TSR_ROOT/scripts/gpu_session.sh" --device cpu \
  --build "$gs_build" --out "$gs_tmp/full" >"$gs_tmp/full.txt" 2>&1 || gs_rc=$?
s=$gs_tmp/full/summary.md
[ "$gs_rc" -eq 0 ] || gs_fail+=("full: exit $gs_rc")
gs_step "$s" 1 build passed
gs_step "$s" 2 job passed
gs_step "$s" 3 anchor skipped
gs_expect "$s" '^\| 3 \| anchor \| skipped \|.*skipped: no GPU' "full: the anchor does not say 'skipped: no GPU'"
gs_step "$s" 4 ranks passed
gs_step "$s" 5 npy passed
gs_step "$s" 6 tests passed
# Every real-input product: checked (NumPy, else a pure-Python product or the job's own float64
# check) and passed.
gs_npy=$(awk -F'\t' '$1 == "npy"' "$gs_tmp/full/results.tsv" 2>/dev/null | wc -l)
gs_npy_ok=$(awk -F'\t' '$1 == "npy" && $22 == "passed" && $21 ~ /max err|own float64 check/' \
  "$gs_tmp/full/results.tsv" 2>/dev/null | wc -l)
{ [ "$gs_npy" -ge 10 ] && [ "$gs_npy" -eq "$gs_npy_ok" ]; } ||
  gs_fail+=("full: $gs_npy_ok of $gs_npy real-input checks passed (at least 10 expected)")
gs_expect "$s" '^\| wine_XtX \| 13x13x178 \| f64 \| A\^T B \|.*\| passed' "full: no passed wine X^T X"
gs_expect "$s" '^\| gen_f64_NN_alpha_beta \|.*\| 4 \|.*\| passed' "full: no passed alpha/beta case on 4 ranks"
gs_jobs=$(awk -F'\t' '$1 == "job" && $22 == "passed"' "$gs_tmp/full/results.tsv" 2>/dev/null | wc -l)
[ "$gs_jobs" -eq 12 ] || gs_fail+=("full: $gs_jobs of the job's 12 runs passed")
for f in 1-build 2-job 3-anchor 4-ranks 5-npy 6-tests; do
  [ -s "$gs_tmp/full/$f.log" ] || gs_fail+=("full: no $f.log")
done

echo "gpu_session: dry run 2 (step 2 killed by its budget, a failing test)"
gs_rc=0
TSR_GPU_SESSION_WORK=$gs_tmp/work2 TSR_GPU_SESSION_BUDGET_JOB=3 TSR_GPU_SESSION_SIZES=8192 \
  TSR_GPU_SESSION_TESTS_ENV=TSR_GEMM=bogus "$TSR_ROOT/scripts/gpu_session.sh" --device cpu \
  --build "$gs_build" --out "$gs_tmp/killed" >"$gs_tmp/killed.txt" 2>&1 || gs_rc=$?
s=$gs_tmp/killed/summary.md
[ "$gs_rc" -eq 1 ] || gs_fail+=("killed: exit $gs_rc, not 1")
gs_step "$s" 2 job 'timed out'
gs_expect "$s" "^\| 2 \| job \| timed out \|.*the step's budget ran out" "killed: step 2's note"
gs_expect "$gs_tmp/killed/2-job.log" "^== np1_f32_8192_auto: timed out \(the step's budget\)" \
  "killed: the first run was not killed by the step's budget"
gs_step "$s" 3 anchor skipped
gs_step "$s" 4 ranks passed
gs_step "$s" 5 npy passed
gs_step "$s" 6 tests FAILED
gs_expect "$s" '^- failed: core_matmul_cpu' "killed: core_matmul_cpu is not in the list of failures"

if [ ${#gs_fail[@]} -gt 0 ]; then
  printf 'gpu_session: %s\n' "${gs_fail[@]}"
  for f in full killed; do
    echo "---- $f: console"
    tail -n 40 "$gs_tmp/$f.txt"
  done
  echo "(kept: $gs_tmp)"
  return 1
fi
grep -E '^\| [1-6] \| ' "$gs_tmp/full/summary.md"
grep -E '^\| 2 \| job \| ' "$gs_tmp/killed/summary.md" | sed 's/^/(budget cut) /'
echo "gpu_session: dry runs passed (summaries checked: every step, real inputs, a step killed by its budget)"
rm -rf "$gs_tmp"
return 0 # sourced: ends the hook
