#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one MPI test command (mpiexec ... or a program that starts mpiexec itself) and tells a
# launcher failure from a test failure. Open MPI under load can fail to start a job at all
# ("pmix_init failed", "Unable to start listen thread", ...): that is not a result of
# Tessera's code, so the output then says
#   MPI launcher failed (not a test failure of Tessera): <the launcher's line>
# and the command is retried once, after a pause; a second launcher failure fails the test
# (exit status of the command), so a machine that cannot start MPI jobs is never reported as
# passing. Any other failure is the test's own and is not retried.
#   mpi_run.sh COMMAND [ARGS...]
set -u
log=$(mktemp "${TMPDIR:-/tmp}/tsr_mpi_run.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
# Lines Open MPI / PMIx print when the job could not be started (not when a rank failed).
pattern='pmix_init failed|PMIx_Init failed|PMIX_ERROR|Unable to start listen thread|ORTE was unable to reliably start|orte_ess_init failed|ompi_rte_init failed|opal_init failed|An ORTE daemon has unexpectedly failed|PRTE has lost communication|mpirun was unable to start the specified application|mpiexec was unable to start|unable to open the PMIx server|OPAL ERROR: Unreachable'
attempt=1
while :; do
  "$@" > "$log" 2>&1
  rc=$?
  cat "$log"
  [ "$rc" -eq 0 ] && exit 0
  why=$(grep -E -m1 "$pattern" "$log")
  [ -z "$why" ] && exit "$rc"
  echo "MPI launcher failed (not a test failure of Tessera): $why"
  if [ "$attempt" -ge 2 ]; then
    echo "MPI launcher failed twice; giving up (exit $rc)"
    exit "$rc"
  fi
  attempt=2
  echo "retrying once in 3 s"
  sleep 3
done
