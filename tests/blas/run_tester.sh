#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one reference BLAS tester (Debian's libblas-test) with libtessera_blas preloaded, and
# passes only when the tester printed PASSED for both the error exits and the computations of
# ROUTINE, reported no failure at all, and the library's own count (TSR_BLAS_VERBOSE) shows
# that the GEMM calls reached Tessera rather than the system BLAS.
#
# usage: run_tester.sh TESTER INPUT ROUTINE ENTRY PRELOAD
#   TESTER   path of xblat3d, xblat3s, xdcblat3, xscblat3 (or the complex xblat3c, xblat3z,
#            xccblat3, xzcblat3)
#   INPUT    the tester's input file (only ROUTINE enabled, error exits on)
#   ROUTINE  the name the tester prints: DGEMM, SGEMM, cblas_dgemm, cblas_sgemm, ZGEMM, ...
#   ENTRY    the symbol it calls, as the library counts it: dgemm_, sgemm_, cblas_dgemm, ...
#   PRELOAD  the LD_PRELOAD value (libtessera_blas.so, after the sanitizer runtime if any)
# Exit status 0 (passed), 1 (failed), 77 (the tester is not installed: skipped).
set -u
if [ $# -ne 5 ]; then
  echo "usage: $0 TESTER INPUT ROUTINE ENTRY PRELOAD" >&2
  exit 2
fi
tester=$1 input=$2 routine=$3 entry=$4 preload=$5

if [ ! -x "$tester" ]; then
  echo "SKIPPED: $tester is not installed (Debian package libblas-test)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tsr_blas_tester.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# The Fortran testers write their summary to the file named in the input; the CBLAS ones
# to stdout. Both end up in report.txt.
TSR_BLAS_VERBOSE=1 LD_PRELOAD="$preload" "$tester" <"$input" >stdout.txt 2>stderr.txt
rc=$?
cat stdout.txt ./*.out >report.txt 2>/dev/null

fail() {
  echo "FAILED: $*"
  echo "---- tester report"
  cat report.txt
  echo "---- stderr"
  cat stderr.txt
  exit 1
}

[ "$rc" -eq 0 ] || fail "$tester exited with status $rc"

# The tester's own verdict first (below, again, with the routine's PASSED lines).
if grep -q -e 'FAIL' -e '\*\*\*\*\*' report.txt; then fail "the tester reported failures"; fi
# The library's exit line: the tester's calls must have reached it, and none may have needed
# the fallback loop.
# Complex entry points have a line of their own ('tessera_blas: complex calls:').
case $entry in
[cz]gemm* | cblas_[cz]gemm*) line='^tessera_blas: complex calls:' ;;
*) line='^tessera_blas: calls:' ;;
esac
counts=$(grep "$line" stderr.txt) ||
  fail "no '$line' line: libtessera_blas was not loaded"
calls=$(printf '%s\n' "$counts" | sed -n "s/.*[:,] $entry \([0-9]*\).*/\1/p")
[ -n "$calls" ] && [ "$calls" -gt 0 ] || fail "no call of $entry reached libtessera_blas: $counts"
cpu=$(printf '%s\n' "$counts" | sed -n 's/.* cpu \([0-9]*\).*/\1/p')
[ -n "$cpu" ] && [ "$cpu" -gt 0 ] || fail "no call was computed by the Tessera GEMM: $counts"
printf '%s\n' "$counts" | grep -q ' fallback 0$' || fail "some calls needed the fallback loop: $counts"

# Any failure message of the testers contains FAIL or a row of asterisks.
if grep -q -e 'FAIL' -e '\*\*\*\*\*' report.txt; then fail "the tester reported failures"; fi
grep -q "^ *$routine *PASSED THE TESTS OF ERROR-EXITS" report.txt ||
  fail "no 'PASSED THE TESTS OF ERROR-EXITS' for $routine"
case $routine in
cblas_*)
  grep -q "^ *$routine *PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS" report.txt ||
    fail "no column-major PASSED for $routine"
  grep -q "^ *$routine *PASSED THE ROW-MAJOR *COMPUTATIONAL TESTS" report.txt ||
    fail "no row-major PASSED for $routine"
  ;;
*)
  grep -q "^ *$routine *PASSED THE COMPUTATIONAL TESTS" report.txt ||
    fail "no 'PASSED THE COMPUTATIONAL TESTS' for $routine"
  ;;
esac

grep -e "FOR N " -e "$routine *PASSED" report.txt
echo "$counts"
echo "PASSED: $(basename "$tester") $(basename "$input")"
exit 0
