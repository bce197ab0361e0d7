#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# TSR_SCALAPACK_REPORT pointing at something that is not a regular file (issue 30): a FIFO
# with no reader used to keep every process from exiting. The drop-in's own test program runs
# on 2 ranks with the report set to a FIFO, a directory and a symbolic link: it must pass and
# exit (timeout 120 s), say on stderr why no report was written, and leave the targets as they
# were; with a new file name, each rank appends one JSON line.
#   report_targets.sh MPIEXEC TEST_SCALAPACK
set -u
mpiexec=$1 prog=$2
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() { # run REPORT: the test program on 2 ranks, output in $d/out
  TSR_SCALAPACK_REPORT=$1 timeout -k 5 120 "$mpiexec" -n 2 --oversubscribe "$prog" > "$d/out" 2>&1
}
mkfifo "$d/fifo" && mkdir "$d/dir" && echo keep > "$d/target" && ln -s "$d/target" "$d/link" ||
  exit 1
for t in fifo dir link; do
  run "$d/$t"
  rc=$?
  [ $rc = 0 ] || { cat "$d/out"; fail "report=$t: exit $rc (124: the processes did not exit)"; }
  [ "$(grep -c 'tessera_scalapack: no report written' "$d/out")" = 2 ] ||
    { cat "$d/out"; fail "report=$t: want one 'no report written' line per rank"; }
done
[ -p "$d/fifo" ] && [ -d "$d/dir" ] && [ -L "$d/link" ] && [ "$(cat "$d/target")" = keep ] ||
  fail "a target was changed"
run "$d/report.json" || { cat "$d/out"; fail "report to a new file: exit $?"; }
[ "$(grep -c '"library":"tessera_scalapack"' "$d/report.json")" = 2 ] || fail "want 2 lines"
echo "report targets: ok"
