#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one of Debian's ScaLAPACK testers (scalapack-mpi-test) under mpiexec with
# libtessera_scalapack preloaded, in a scratch directory holding our input file, and checks
# the outcome (exit 1 on failure, 77 when the tester is not installed).
#   run_tester.sh pblas  TESTER INPUT DATNAME ROUTINE NP PRELOAD MPIEXEC
#     a PBLAS tester (dpb3tst, spb3tst, zpb3tst, cpb3tst): the summary row of ROUTINE must show every test
#     passed (none failed or skipped), every error exit must be PASSED, nothing FAILED, and the
#     library's report (one JSON line per rank) must show calls on every rank, error exits
#     reaching it, every other call computed (quick/scale/summa/redistribute) and none failed.
#   run_tester.sh lapack TESTER INPUT DATNAME - NP PRELOAD MPIEXEC
#     a ScaLAPACK tester (xdlu, xdqr, xdllt, xdinv, xdhrd, xdbrd, xdtrd, xzlu, ...): run once without and once with the
#     library; the "Finished ... tests" summaries must be identical, with no failed residual
#     checks, and the report must show no failed call.
set -u
mode=$1 tester=$2 input=$3 datname=$4 routine=$5 np=$6 preload=$7 mpiexec=$8
[ -x "$tester" ] || { echo "SKIP: $tester not installed (Debian package scalapack-mpi-test)"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
if [ "${routine#PS}" != "$routine" ]; then
  # Single precision: the same cases, with the routine names of the single tester.
  sed 's/^PD/PS/' "$input" > "$datname"
elif [ "${routine#PC}" != "$routine" ]; then
  # Single complex: the double complex cases, with the routine names of the single tester.
  sed 's/^PZ/PC/' "$input" > "$datname"
else
  cp "$input" "$datname"
fi
report=$work/report.json
run() { # run [preload]: output in out.txt
  if [ -n "${1:-}" ]; then
    TSR_SCALAPACK_REPORT=$report "$mpiexec" -n "$np" --oversubscribe -x TSR_SCALAPACK_REPORT \
      -x LD_PRELOAD="$1" "$tester" > out.txt 2>&1
  else
    "$mpiexec" -n "$np" --oversubscribe "$tester" > out.txt 2>&1
  fi
}
fail() { echo "FAIL: $*"; echo "---- tester output (tail)"; tail -40 out.txt; exit 1; }
field() { # field NAME: the values of "NAME":<number> of every report line, one per line
  sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$report"
}
sum() { awk '{s += $1} END {print s + 0}'; }

if [ "$mode" = pblas ]; then
  run "$preload" || fail "tester exited with status $?"
  row=$(grep "|  *$routine " out.txt) || fail "no summary row for $routine"
  echo "$row"
  set -- $row
  total=$3 passed=$4 failed=$5 skipped=$6
  [ "$total" -gt 0 ] && [ "$total" = "$passed" ] && [ "$failed" = 0 ] && [ "$skipped" = 0 ] ||
    fail "$routine: $passed of $total passed, $failed failed, $skipped skipped"
  grep -q "Input-only parameter check: $routine *PASSED" out.txt || fail "error exits not PASSED"
  if grep -v "TOTAL TESTS" out.txt | grep -q "FAILED"; then fail "FAILED in the output"; fi
  grep -q "Error-exit tests completed" out.txt || fail "error exits were not run"
  lines=$(grep -c tessera_scalapack "$report")
  [ "$lines" = "$np" ] || fail "report has $lines lines for $np ranks"
  calls=$(field calls | sum) errors=$(field error | sum) failedc=$(field failed | sum)
  done_=$(( $(field quick | sum) + $(field scale | sum) + $(field summa | sum) + $(field redistribute | sum) + $(field direct | sum) ))
  echo "report: $calls calls, $errors error exits, $done_ computed by Tessera, $failedc failed"
  [ "$errors" -gt 0 ] || fail "no error exit reached the library"
  [ "$failedc" = 0 ] || fail "$failedc calls failed in the library"
  [ $((errors + done_)) = "$calls" ] || fail "calls unaccounted for"
  [ $(( $(field summa | sum) + $(field redistribute | sum) + $(field direct | sum) )) -gt 0 ] || fail "no product computed"
  echo "PASSED"
  exit 0
fi

run || fail "reference run exited with status $?"
grep -A3 "^Finished" out.txt > ref.txt || fail "reference run has no summary"
run "$preload" || fail "run with the library exited with status $?"
grep -A3 "^Finished" out.txt > tsr.txt || fail "run with the library has no summary"
echo "without the library:"; cat ref.txt
echo "with libtessera_scalapack:"; cat tsr.txt
cmp -s ref.txt tsr.txt || fail "the summaries differ"
grep -q " 0 tests completed and failed residual checks" tsr.txt || fail "failed residual checks"
[ "$(field failed | sum)" = 0 ] || fail "calls failed in the library"
echo "report: $(field calls | sum) p?gemm_ calls computed by Tessera (all ranks)"
echo "PASSED"
