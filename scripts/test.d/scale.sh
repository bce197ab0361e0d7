# SPDX-License-Identifier: BSD-3-Clause
# Hook of scripts/test.sh (sourced in a subshell): the smoke version of the SimGrid scaling
# study (bench/scale/run.sh --smoke: the distributed layer built with smpicc in modeled-compute
# mode, P = 4 and 16 simulated ranks on a fat tree and a dragonfly, SUMMA, 2.5D and auto),
# with its sanity checks (bench/scale/report.py --check-smoke). Installs libsimgrid-dev.
"$TSR_ROOT/bench/scale/run.sh" --smoke --out "${TSR_BUILD_DIR:-$TSR_ROOT/build}/scale-smoke"
